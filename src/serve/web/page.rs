//! What the browser seat serves: its page and the page's assets, one table of paths. xterm.js
//! and its fit addon are vendored (web/vendor, from the npm registry; see web/README.md), so
//! the page works on a classroom network with no way out.

/// One thing served, by its path.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static str,
}

/// The page's path: the address students open.
pub const PAGE: &str = "/";

/// The WebSocket's path.
pub const SOCKET: &str = "/ws";

/// Everything but the WebSocket. The page itself is made by `page` (it says whether a join
/// code is asked for).
pub const ASSETS: &[Asset] = &[
    Asset {
        path: "/seat.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../../../web/seat.js"),
    },
    Asset {
        path: "/seat.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../../../web/seat.css"),
    },
    Asset {
        path: "/xterm.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../../../web/vendor/xterm.js"),
    },
    Asset {
        path: "/xterm.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("../../../web/vendor/xterm.css"),
    },
    Asset {
        path: "/addon-fit.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("../../../web/vendor/addon-fit.js"),
    },
];

/// The page, asking for a join code or not.
pub fn page(needs_code: bool) -> String {
    include_str!("../../../web/index.html")
        .replace("{{JOIN}}", if needs_code { "code" } else { "open" })
}

/// The asset served at `path`, if any.
pub fn asset(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_the_page_names_is_served() {
        let page = page(true);
        for name in [
            "/xterm.js",
            "/xterm.css",
            "/addon-fit.js",
            "/seat.js",
            "/seat.css",
        ] {
            assert!(page.contains(&format!("\"{name}\"")), "{name}");
            assert!(asset(name).is_some(), "{name}");
        }
        // Nothing on the page comes from elsewhere.
        assert!(!page.contains("http://") && !page.contains("https://"));
    }

    #[test]
    fn the_page_asks_for_a_code_only_when_the_class_has_one() {
        assert!(page(true).contains("data-join=\"code\""));
        assert!(page(false).contains("data-join=\"open\""));
    }
}
