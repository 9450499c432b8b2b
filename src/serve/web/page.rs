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
    fn every_address_the_page_names_is_served_here_and_every_asset_is_named() {
        let page = page(true);
        let named: Vec<&str> = ["src=\"", "href=\""]
            .iter()
            .flat_map(|attribute| page.split(attribute).skip(1))
            .filter_map(|rest| rest.split('"').next())
            .collect();
        for address in &named {
            // The page's icon is none at all, so that no request is made for one.
            if *address == "data:," {
                continue;
            }
            assert!(asset(address).is_some(), "{address} is not served");
        }
        for served in ASSETS {
            assert!(
                named.contains(&served.path),
                "{} is served but unused",
                served.path
            );
        }
    }

    #[test]
    fn the_page_asks_for_a_code_only_when_the_class_has_one() {
        assert!(page(true).contains("data-join=\"code\""));
        assert!(page(false).contains("data-join=\"open\""));
    }
}
