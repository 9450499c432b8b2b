//! The shape of the code, held: the engine is a crate of its own that links no terminal,
//! server or network crate, its top-level modules stand in layers (none imports one above
//! it), and the source files import each other in at most two circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The project's root, where Cargo.lock and the two crates' sources are.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_engine_crate_links_no_terminal_server_or_network_crate() {
    let lock: toml::Table = std::fs::read_to_string(root().join("Cargo.lock"))
        .unwrap()
        .parse()
        .unwrap();
    let packages = lock["package"].as_array().unwrap();
    let dependencies_of = |name: &str| -> Vec<String> {
        let package = packages
            .iter()
            .find(|package| package["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("{name} is not in Cargo.lock"));
        package
            .get("dependencies")
            .and_then(|list| list.as_array())
            .map(|list| {
                // "name" or "name version" when two versions are locked.
                list.iter()
                    .map(|entry| {
                        entry
                            .as_str()
                            .unwrap()
                            .split(' ')
                            .next()
                            .unwrap()
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut linked = BTreeSet::new();
    let mut to_visit = vec!["attn-engine".to_string()];
    while let Some(name) = to_visit.pop() {
        for dependency in dependencies_of(&name) {
            if linked.insert(dependency.clone()) {
                to_visit.push(dependency);
            }
        }
    }
    assert!(
        linked.contains("nalgebra"),
        "the walk found the engine's own dependencies"
    );
    for stack in [
        "tokio",
        "russh",
        "axum",
        "hyper",
        "rustls",
        "ratatui",
        "crossterm",
        "clap",
    ] {
        assert!(
            !linked.contains(stack),
            "the engine links {stack}: {linked:?}"
        );
    }
}

#[test]
fn the_source_files_import_each_other_in_at_most_two_circles() {
    let files = Sources::read();
    let circles = files.circles();
    let shown: Vec<String> = circles.iter().map(|circle| circle.join(" ↔ ")).collect();
    assert!(
        circles.len() <= 2,
        "{} circles of files:\n{}",
        circles.len(),
        shown.join("\n")
    );
}

#[test]
fn the_engines_top_level_modules_import_each_other_in_layers() {
    // A circle here means two modules that cannot be read, changed or tested one before the
    // other: an operation that must know the whole Attention to read a cell of it.
    let files = Sources::read_from(&[root().join("engine/src")]);
    let circles = files.module_circles();
    assert!(
        circles.is_empty(),
        "the engine's top-level modules import each other round {} circle(s):\n{}",
        circles.len(),
        circles.join("\n")
    );
    // The order the README gives, bottom first, as the imports make it.
    println!("layers: {}", files.module_layers().join(" < "));
    // The walk saw the imports it should: the layers run one way, not nowhere.
    let imports = files.module_imports();
    for (from, to) in [
        ("attention", "ops"),
        ("attention", "lesson"),
        ("ops", "matrices"),
        ("ops", "workings"),
        ("attention", "workings"),
        ("pipeline", "ops"),
    ] {
        assert!(
            imports.contains_key(&(from.to_string(), to.to_string())),
            "{from} is seen to import {to}: {:?}",
            imports.keys().collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_checkpoint_is_read_without_the_lesson_or_the_attention_computation() {
    // checkpoint reads files into matrices: of the rest of the engine it uses only the one rule
    // for untrusted text, which its messages print file names and keys through. Building a
    // lesson from a checkpoint is a module above both.
    let files = Sources::read_from(&[root().join("engine/src")]);
    let mut seen = 0;
    for module in files
        .texts
        .keys()
        .filter(|file| file.first().is_some_and(|first| first == "checkpoint"))
    {
        seen += 1;
        let mut paths: Vec<Vec<String>> = files
            .uses(module)
            .into_iter()
            .filter_map(|(_, path)| files.absolute(module, &path))
            .collect();
        paths.extend(paths_in_code(&files.texts[module]));
        for path in paths {
            let inside = path.first().is_some_and(|first| first == "checkpoint");
            let text_rule = path.starts_with(&["lesson".to_string(), "text".to_string()]);
            let engine_module = path
                .first()
                .is_some_and(|first| files.texts.keys().any(|file| file.first() == Some(first)));
            assert!(
                inside || text_rule || !engine_module,
                "{} uses crate::{}",
                shown(module),
                path.join("::")
            );
        }
    }
    assert!(seen >= 5, "the checkpoint's files were read: {seen}");
}

#[test]
fn the_layer_check_sees_a_module_circle_through_a_reexport_or_a_path_in_code() {
    // ops names a thing attention re-exports from lesson: ops → lesson and ops → attention;
    // lesson names attention's type in a signature, with no `use` line.
    let files = Sources::of(&[
        ("attention", "mod cells;\npub use crate::lesson::Lesson;\n"),
        (
            "attention/cells",
            "use crate::ops::Op;\npub struct Attention;\n",
        ),
        ("ops", "use crate::attention::Lesson;\npub struct Op;\n"),
        (
            "lesson",
            "pub struct Lesson;\nfn step(_: &crate::attention::cells::Attention) {}\n",
        ),
        ("data", "use crate::ops::Op;\n"),
    ]);
    let circles = files.module_circles();
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(
        circles[0].starts_with("attention ↔ lesson ↔ ops:"),
        "{}",
        circles[0]
    );
    for seen in [
        "attention → ops: attention/cells uses crate::ops::Op",
        "ops → lesson: ops uses crate::attention::Lesson",
        "lesson → attention: lesson uses crate::attention::cells::Attention",
    ] {
        assert!(circles[0].contains(seen), "{seen} in {}", circles[0]);
    }
    // Without the path in lesson's code, no circle is left.
    let files = Sources::of(&[
        ("attention", "pub use crate::lesson::Lesson;\n"),
        ("ops", "use crate::attention::Lesson;\n"),
        ("lesson", "pub struct Lesson;\n"),
    ]);
    assert!(files.module_circles().is_empty());
}

#[test]
fn the_circle_count_sees_a_circle_through_a_reexport() {
    // The measure itself: a file that imports a name its own importer re-exports is a circle.
    let files = Sources::of(&[
        ("a", "use crate::b::Thing;\npub struct Other;\n"),
        ("b", "mod inner;\npub use inner::Thing;\n"),
        ("b/inner", "use crate::a::Other;\npub struct Thing;\n"),
        ("c", "use crate::a::Other;\n"),
    ]);
    assert_eq!(
        files.circles(),
        vec![vec!["a".to_string(), "b/inner".to_string()]]
    );
}

/// Every source file of both crates by its module path (`attention/derivation`), with its text
/// up to its tests.
struct Sources {
    texts: BTreeMap<Vec<String>, String>,
}

impl Sources {
    fn read() -> Sources {
        Sources::read_from(&[root().join("src"), root().join("engine/src")])
    }

    /// The files of the crates whose sources are in `crate_sources`.
    fn read_from(crate_sources: &[PathBuf]) -> Sources {
        let mut texts = BTreeMap::new();
        for crate_source in crate_sources {
            let mut folders = vec![crate_source.clone()];
            while let Some(folder) = folders.pop() {
                for entry in std::fs::read_dir(&folder).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        folders.push(path);
                    } else if path.extension().is_some_and(|extension| extension == "rs")
                        && !path.ends_with("src/main.rs")
                    {
                        let text = std::fs::read_to_string(&path).unwrap();
                        texts.insert(module_path(crate_source, &path), code_of(&text));
                    }
                }
            }
        }
        Sources { texts }
    }

    /// Made from texts, for testing the measure.
    fn of(files: &[(&str, &str)]) -> Sources {
        let texts = files
            .iter()
            .map(|(path, text)| (path.split('/').map(String::from).collect(), code_of(text)))
            .collect();
        Sources { texts }
    }

    /// Each set of files that import each other round a circle, as sorted module paths.
    fn circles(&self) -> Vec<Vec<String>> {
        let modules: Vec<&Vec<String>> = self.texts.keys().collect();
        let index_of = |module: &Vec<String>| modules.iter().position(|known| *known == module);
        let imports: Vec<BTreeSet<usize>> = modules
            .iter()
            .map(|module| {
                let mut to = BTreeSet::new();
                for (public, path) in self.uses(module) {
                    // A re-export names a thing; it is not a use of it.
                    if public {
                        continue;
                    }
                    let target = self
                        .absolute(module, &path)
                        .and_then(|path| self.defined_in(path, 0));
                    if let Some(index) = target.as_ref().and_then(index_of)
                        && modules[index] != *module
                    {
                        to.insert(index);
                    }
                }
                to
            })
            .collect();
        let mut circles: Vec<Vec<String>> = strongly_connected(&imports)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let mut names: Vec<String> =
                    group.iter().map(|&index| shown(modules[index])).collect();
                names.sort();
                names
            })
            .collect();
        circles.sort();
        circles
    }

    /// Which top-level module imports which, each with one file and path that shows it. A
    /// path counts for the module it names and, when that module re-exports the thing, for
    /// the module that defines it: a re-export passes a dependency on, it does not end it.
    /// Paths written in code (`&crate::attention::Attention` in a signature) count as much as
    /// `use` lines, and so do re-exports (`pub use crate::ops::Op` is built on ops).
    fn module_imports(&self) -> BTreeMap<(String, String), String> {
        let mut imports = BTreeMap::new();
        for module in self.texts.keys() {
            let Some(from) = module.first() else { continue };
            let mut paths: Vec<Vec<String>> = self
                .uses(module)
                .into_iter()
                .filter_map(|(_, path)| self.absolute(module, &path))
                .collect();
            paths.extend(paths_in_code(&self.texts[module]));
            for path in paths {
                let named = path.first().cloned();
                let defined = self
                    .defined_in(path.clone(), 0)
                    .and_then(|file| file.first().cloned());
                for to in [named, defined].into_iter().flatten() {
                    let known = self.texts.keys().any(|file| file.first() == Some(&to));
                    if to != *from && known {
                        imports.entry((from.clone(), to)).or_insert_with(|| {
                            format!("{} uses crate::{}", shown(module), path.join("::"))
                        });
                    }
                }
            }
        }
        imports
    }

    /// Each set of top-level modules that import each other round a circle: their names, then
    /// each import between them with the file that makes it.
    fn module_circles(&self) -> Vec<String> {
        let imports = self.module_imports();
        let modules: Vec<&String> = self
            .texts
            .keys()
            .filter_map(|file| file.first())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let index_of = |name: &String| modules.iter().position(|known| *known == name);
        let mut successors = vec![BTreeSet::new(); modules.len()];
        for (from, to) in imports.keys() {
            if let (Some(from), Some(to)) = (index_of(from), index_of(to)) {
                successors[from].insert(to);
            }
        }
        let mut circles: Vec<String> = strongly_connected(&successors)
            .into_iter()
            .filter(|group| group.len() > 1)
            .map(|group| {
                let mut names: Vec<&String> = group.iter().map(|&index| modules[index]).collect();
                names.sort();
                let why: Vec<String> = imports
                    .iter()
                    .filter(|((from, to), _)| names.contains(&from) && names.contains(&to))
                    .map(|((from, to), shown)| format!("  {from} → {to}: {shown}"))
                    .collect();
                let names: Vec<&str> = names.iter().map(|name| name.as_str()).collect();
                format!("{}:\n{}", names.join(" ↔ "), why.join("\n"))
            })
            .collect();
        circles.sort();
        circles
    }

    /// The top-level modules in layers, bottom first: each layer's modules import only from
    /// the layers before it. Only for modules with no circle among them.
    fn module_layers(&self) -> Vec<String> {
        let imports = self.module_imports();
        let mut left: BTreeSet<&String> =
            self.texts.keys().filter_map(|file| file.first()).collect();
        let mut placed: BTreeSet<&String> = BTreeSet::new();
        let mut layers = Vec::new();
        while !left.is_empty() {
            let layer: Vec<&String> = left
                .iter()
                .copied()
                .filter(|module| {
                    imports
                        .keys()
                        .filter(|(from, _)| from == *module)
                        .all(|(_, to)| placed.contains(to))
                })
                .collect();
            if layer.is_empty() {
                break;
            }
            for module in &layer {
                left.remove(module);
                placed.insert(module);
            }
            let names: Vec<&str> = layer.iter().map(|name| name.as_str()).collect();
            layers.push(names.join(", "));
        }
        layers
    }

    /// The paths of a file's `use` lines, `{…}` groups spread out, each with whether it is a
    /// re-export.
    fn uses(&self, module: &[String]) -> Vec<(bool, Vec<String>)> {
        let text = &self.texts[module];
        let mut found = Vec::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let line = line.trim_start();
            let (public, start) = match line.split_once("use ") {
                Some(("", rest)) => (false, rest),
                Some((visibility, rest))
                    if visibility.starts_with("pub") && !visibility.trim_end().contains(' ') =>
                {
                    (true, rest)
                }
                _ => continue,
            };
            // The statement, to its `;`, with `x as y` kept as x.
            let mut statement = start.to_string();
            while !statement.contains(';') {
                let Some(next) = lines.next() else { break };
                statement.push_str(next);
            }
            let statement = statement
                .split(';')
                .next()
                .unwrap_or_default()
                .replace(" as ", "@");
            let tree: String = statement.chars().filter(|c| !c.is_whitespace()).collect();
            for path in spread(&tree) {
                let path = path.split('@').next().unwrap_or_default();
                let segments: Vec<String> = path
                    .split("::")
                    .filter(|segment| *segment != "self" || path.starts_with("self"))
                    .map(String::from)
                    .collect();
                found.push((public, segments));
            }
        }
        found
    }

    /// A `use` path as a path from a crate root; `None` for another crate's or std's.
    fn absolute(&self, module: &[String], path: &[String]) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" | "attn_tutor" | "attn_engine" => Some(rest.to_vec()),
            "self" => Some([module, rest].concat()),
            "super" => {
                let mut at = module.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|segment| segment == "super") {
                    at.pop();
                    rest = &rest[1..];
                }
                Some([at.as_slice(), rest].concat())
            }
            _ => {
                let child = [module, std::slice::from_ref(first)].concat();
                self.texts
                    .contains_key(&child)
                    .then(|| [module, path].concat())
            }
        }
    }

    /// The file that defines what a path from a crate root names: the deepest module file on
    /// the path, or the file a name it re-exports comes from.
    fn defined_in(&self, path: Vec<String>, followed: usize) -> Option<Vec<String>> {
        for length in (1..=path.len()).rev() {
            let module = &path[..length];
            if !self.texts.contains_key(module) {
                continue;
            }
            if let (Some(name), true) = (path.get(length), followed < 8) {
                for (public, exported) in self.uses(module) {
                    if public && exported.last() == Some(name) {
                        let from = self.absolute(module, &exported)?;
                        if from[..from.len() - 1] != *module {
                            let rest = &path[length + 1..];
                            return self.defined_in([from.as_slice(), rest].concat(), followed + 1);
                        }
                    }
                }
            }
            return Some(module.to_vec());
        }
        None
    }
}

/// `engine/src/attention/mod.rs` → `attention`; `src/lib.rs` → the root, an empty path.
fn module_path(crate_source: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(crate_source).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(path.last().map(String::as_str), Some("mod" | "lib")) {
        path.pop();
    }
    path
}

fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "lib".to_string()
    } else {
        module.join("/")
    }
}

/// A file's code without its comments and without its `#[cfg(test)]` module, whose imports are
/// the tests', not the program's.
fn code_of(text: &str) -> String {
    let code: Vec<&str> = text
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code))
        .collect();
    let code = code.join("\n");
    match code.find("#[cfg(test)]\nmod ") {
        Some(tests) => code[..tests].to_string(),
        None => code,
    }
}

/// The `crate::…` paths written in code outside `use` lines, from the crate root, each up to
/// its last `::` name (`crate::attention::Attention::compute` gives attention, Attention,
/// compute: `defined_in` stops at the deepest file).
fn paths_in_code(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for line in code.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("use ") || trimmed.starts_with("pub use ") {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let path: Vec<String> = rest[..end]
                .split("::")
                .filter(|segment| !segment.is_empty())
                .map(String::from)
                .collect();
            if !path.is_empty() {
                paths.push(path);
            }
        }
    }
    paths
}

/// `a::{b, c::{d, e}}` → `a::b`, `a::c::d`, `a::c::e` (no whitespace in the tree).
fn spread(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_string()];
    };
    let (prefix, inner) = (
        &tree[..open],
        &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())],
    );
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
        .iter()
        .filter(|part| !part.is_empty())
        .flat_map(|part| spread(part))
        .map(|path| format!("{prefix}{path}"))
        .collect()
}

/// Tarjan's strongly connected components of a graph given as each node's successors.
fn strongly_connected(successors: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'a> {
        successors: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        groups: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, node: usize) {
            self.index[node] = Some(self.next);
            self.low[node] = self.next;
            self.next += 1;
            self.stack.push(node);
            self.on_stack[node] = true;
            for &next in self.successors[node].iter() {
                match self.index[next] {
                    None => {
                        self.visit(next);
                        self.low[node] = self.low[node].min(self.low[next]);
                    }
                    Some(index) if self.on_stack[next] => {
                        self.low[node] = self.low[node].min(index)
                    }
                    Some(_) => {}
                }
            }
            if Some(self.low[node]) == self.index[node] {
                let mut group = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack[member] = false;
                    group.push(member);
                    if member == node {
                        break;
                    }
                }
                self.groups.push(group);
            }
        }
    }
    let count = successors.len();
    let mut walk = Walk {
        successors,
        index: vec![None; count],
        low: vec![0; count],
        stack: Vec::new(),
        on_stack: vec![false; count],
        next: 0,
        groups: Vec::new(),
    };
    for node in 0..count {
        if walk.index[node].is_none() {
            walk.visit(node);
        }
    }
    walk.groups
}
