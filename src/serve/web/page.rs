//! The browser seat's page: one self-contained answer, with xterm.js and its fit addon
//! (vendored in web/vendor from the npm registry; see web/README.md), the page's own script
//! and styles inlined, so that opening it takes one connection (one place of its address: a
//! class behind one NAT address opening the page at once would otherwise take six each) and
//! works on a classroom network with no way out. Its scripts are allowed by their hashes.

use base64::Engine;
use sha2::{Digest, Sha256};

/// The page's path: the address students open.
pub(crate) const PAGE: &str = "/";

/// The WebSocket's path.
pub(crate) const SOCKET: &str = "/ws";

/// The scripts, in the order they run: the terminal, its fit addon, the seat.
const SCRIPTS: [&str; 3] = [
    include_str!("../../../web/vendor/xterm.js"),
    include_str!("../../../web/vendor/addon-fit.js"),
    include_str!("../../../web/seat.js"),
];

/// The page, and the Content-Security-Policy that lets exactly its scripts run.
pub(crate) struct Page {
    pub html: String,
    pub policy: String,
}

/// The page, asking for a join code or not.
pub(crate) fn page(needs_code: bool) -> Page {
    let scripts: String = SCRIPTS
        .iter()
        .map(|script| format!("<script>{script}</script>\n"))
        .collect();
    let html = include_str!("../../../web/index.html")
        .replace("{{JOIN}}", if needs_code { "code" } else { "open" })
        .replace(
            "{{XTERM_CSS}}",
            include_str!("../../../web/vendor/xterm.css"),
        )
        .replace("{{SEAT_CSS}}", include_str!("../../../web/seat.css"))
        .replace("{{SCRIPTS}}", &scripts);
    let hashes: Vec<String> = SCRIPTS
        .iter()
        .map(|script| {
            let digest = Sha256::digest(script.as_bytes());
            format!(
                "'sha256-{}'",
                base64::engine::general_purpose::STANDARD.encode(digest)
            )
        })
        .collect();
    // xterm.js styles its rows with style elements of its own making.
    let policy = format!(
        "default-src 'none'; script-src {}; style-src 'unsafe-inline'; connect-src 'self'; \
         img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        hashes.join(" ")
    );
    Page { html, policy }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_whole_and_loads_nothing_from_anywhere() {
        let page = page(true);
        for script in SCRIPTS {
            assert!(page.html.contains(script));
            // Nothing in a script may end its element early.
            assert!(!script.contains("</script"));
        }
        for placeholder in ["{{JOIN}}", "{{XTERM_CSS}}", "{{SEAT_CSS}}", "{{SCRIPTS}}"] {
            assert!(!page.html.contains(placeholder), "{placeholder} is left");
        }
        // No address but the empty icon: nothing else is fetched.
        for attribute in ["src=\"", "href=\""] {
            for rest in page.html.split(attribute).skip(1) {
                assert!(rest.starts_with("data:,\""), "{attribute}{}", &rest[..40]);
            }
        }
        assert_eq!(page.policy.matches("'sha256-").count(), SCRIPTS.len());
    }

    #[test]
    fn the_page_asks_for_a_code_only_when_the_class_has_one() {
        assert!(page(true).html.contains("data-join=\"code\""));
        assert!(page(false).html.contains("data-join=\"open\""));
    }
}
