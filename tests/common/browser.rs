//! A real browser for the browser-seat tests: Debian's headless Chromium, driven over
//! WebDriver by its chromedriver (with the fantoccini client), with a profile of its own that
//! goes when the test ends.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::Instant;

use fantoccini::{Client, ClientBuilder, Locator};
use tempfile::TempDir;

use super::classroom::{KillOnDrop, Server};
use super::pty::{PATIENCE, POLL};

pub const CHROMIUM: &str = "/usr/bin/chromium";
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The flags that keep Chromium on this machine: no sandbox (the tests may run as root), no
/// GPU, and none of its calls home, which a closed network refuses many times over.
const FLAGS: [&str; 9] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1000,640",
];

/// Whether Chromium and chromedriver are installed; says so when not (and fails under CI,
/// whose `.ci/run` installs them).
pub fn installed(test: &str) -> bool {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        if !Path::new(tool).exists() {
            eprintln!("{test}:");
            super::missing_tool(tool, "chromium and chromium-driver");
            return false;
        }
    }
    true
}

pub struct Browser {
    client: Client,
    runtime: tokio::runtime::Runtime,
    _driver: KillOnDrop,
    _profile: TempDir,
}

impl Browser {
    pub fn start() -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port for chromedriver")
            .port();
        let driver = KillOnDrop(
            Command::new(CHROMEDRIVER)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver starts"),
        );
        let profile = TempDir::new().unwrap();
        let mut args: Vec<String> = FLAGS.iter().map(|flag| flag.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".to_string(),
            serde_json::json!({ "binary": CHROMIUM, "args": args }),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let address = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + PATIENCE;
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            let connected = runtime.block_on(
                ClientBuilder::new(connector)
                    .capabilities(capabilities.clone())
                    .connect(&address),
            );
            match connected {
                Ok(client) => break client,
                Err(error) if Instant::now() < deadline => {
                    let _ = error;
                    thread::sleep(POLL);
                }
                Err(error) => panic!("chromedriver did not start Chromium: {error}"),
            }
        };
        Browser {
            client,
            runtime,
            _driver: driver,
            _profile: profile,
        }
    }

    /// Opens the server's page.
    pub fn open(&self, server: &Server) {
        let page = server.page();
        self.runtime
            .block_on(self.client.goto(&page))
            .unwrap_or_else(|error| panic!("the browser cannot open {page}: {error}"));
    }

    /// Types into the join form and presses Join.
    pub fn join(&self, name: &str, code: &str) {
        self.runtime.block_on(async {
            let field = self.client.find(Locator::Id("name")).await.unwrap();
            field.clear().await.unwrap();
            field.send_keys(name).await.unwrap();
            let field = self.client.find(Locator::Id("code")).await.unwrap();
            if field.is_displayed().await.unwrap() {
                field.clear().await.unwrap();
                field.send_keys(code).await.unwrap();
            }
            self.client
                .find(Locator::Css("#join button"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
        });
    }

    /// What the page's message line says.
    pub fn message(&self) -> String {
        self.text_of("#message")
    }

    /// The terminal's rows as the page draws them (xterm.js's DOM renderer), one per line.
    pub fn screen(&self) -> String {
        let rows = self.runtime.block_on(self.client.execute(
            "return Array.from(document.querySelectorAll('.xterm-rows > div'), \
             (row) => row.textContent.replace(/\\u00a0/g, ' ').trimEnd()).join('\\n');",
            vec![],
        ));
        rows.ok()
            .and_then(|rows| rows.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The text of the page's element `css` as shown (none when it is hidden).
    pub fn text_of(&self, css: &str) -> String {
        self.runtime
            .block_on(async {
                let element = self.client.find(Locator::Css(css)).await?;
                element.text().await
            })
            .unwrap_or_default()
    }

    /// Waits until `ready` holds of what `read` returns, and returns that.
    #[track_caller]
    pub fn wait_for(
        &self,
        what: &str,
        read: impl Fn(&Browser) -> String,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let seen = read(self);
            if ready(&seen) {
                return seen;
            }
            assert!(
                Instant::now() < deadline,
                "waited {PATIENCE:?} in the browser for {what}; it shows:\n{seen}\n(message: {})",
                self.message()
            );
            thread::sleep(POLL);
        }
    }

    #[track_caller]
    pub fn wait_for_screen(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        self.wait_for(what, Browser::screen, ready)
    }

    #[track_caller]
    pub fn wait_for_message(&self, what: &str, words: &str) -> String {
        self.wait_for(what, Browser::message, |message| message.contains(words))
    }

    /// Presses keys in the terminal, as the student would (WebDriver key events into the
    /// terminal's own input element).
    pub fn press(&self, keys: &str) {
        self.runtime.block_on(async {
            let input = self
                .client
                .find(Locator::Css(".xterm-helper-textarea"))
                .await
                .unwrap();
            input.send_keys(keys).await.unwrap();
        });
    }

    /// Pastes `text` into the terminal, as the browser's paste (Ctrl-V) does.
    pub fn paste(&self, text: &str) {
        self.runtime
            .block_on(self.client.execute(
                "const data = new DataTransfer(); data.setData('text/plain', arguments[0]); \
                 document.querySelector('.xterm-helper-textarea').dispatchEvent(\
                 new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));",
                vec![serde_json::json!(text)],
            ))
            .expect("the paste is dispatched");
    }

    /// Selects the terminal's first rows with Shift and a drag of the mouse (the tutor takes
    /// plain clicks), then presses Ctrl+C; returns what the page's clipboard copy carried.
    pub fn select_and_copy(&self) -> String {
        use fantoccini::actions::{
            InputSource, KeyAction, KeyActions, MOUSE_BUTTON_LEFT, MouseActions, PointerAction,
        };
        use fantoccini::key::Key;
        use std::time::Duration;
        let pause = Duration::from_millis(50);
        self.runtime.block_on(async {
            // Keep what a copy puts on the clipboard where the test can read it.
            self.client
                .execute(
                    "window.copied = null; document.addEventListener('copy', (event) => { \
                     window.copied = event.clipboardData.getData('text/plain'); });",
                    vec![],
                )
                .await
                .unwrap();
            let shift = KeyActions::new("keyboard".to_string())
                .then(KeyAction::Down {
                    value: Key::Shift.into(),
                })
                .then(KeyAction::Pause { duration: pause })
                .then(KeyAction::Pause { duration: pause })
                .then(KeyAction::Pause { duration: pause })
                .then(KeyAction::Up {
                    value: Key::Shift.into(),
                });
            let mouse = MouseActions::new("mouse".to_string())
                .then(PointerAction::MoveTo {
                    duration: None,
                    x: 20.0,
                    y: 12.0,
                })
                .then(PointerAction::Down {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::MoveTo {
                    duration: Some(pause),
                    x: 400.0,
                    y: 50.0,
                })
                .then(PointerAction::Up {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Pause { duration: pause });
            self.client
                .perform_actions(fantoccini::actions::Actions::from(shift).and(mouse))
                .await
                .unwrap();
            let copy = KeyActions::new("keyboard".to_string())
                .then(KeyAction::Down {
                    value: Key::Control.into(),
                })
                .then(KeyAction::Down { value: 'c' })
                .then(KeyAction::Up { value: 'c' })
                .then(KeyAction::Up {
                    value: Key::Control.into(),
                });
            self.client.perform_actions(copy).await.unwrap();
            self.client.release_actions().await.unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
            self.client
                .execute("return window.copied;", vec![])
                .await
                .ok()
                .and_then(|copied| copied.as_str().map(str::to_string))
                .unwrap_or_default()
        })
    }

    /// Draws `svg` as the browser does (an image on a canvas, at one pixel per unit) and returns
    /// the colour, as `#rrggbb`, of each pixel asked for.
    pub fn rasterise(&self, svg: &str, pixels: &[(u32, u32)]) -> Vec<String> {
        let script = "const [svg, pixels, done] = arguments; \
            const image = new Image(); \
            image.onload = () => { \
              const canvas = document.createElement('canvas'); \
              canvas.width = image.width; canvas.height = image.height; \
              const context = canvas.getContext('2d'); context.drawImage(image, 0, 0); \
              done(pixels.map(([x, y]) => { \
                const [r, g, b] = context.getImageData(x, y, 1, 1).data; \
                return '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join(''); \
              })); \
            }; \
            image.onerror = () => done(null); \
            image.src = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));";
        let colours = self
            .runtime
            .block_on(async {
                self.client.goto("about:blank").await?;
                self.client
                    .execute_async(
                        script,
                        vec![serde_json::json!(svg), serde_json::json!(pixels)],
                    )
                    .await
            })
            .expect("the browser draws the picture");
        colours
            .as_array()
            .expect("the browser could not load the picture as an image")
            .iter()
            .map(|colour| colour.as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Puts `text` on the browser's clipboard, as copying it from a field of the page does,
    /// and gives the terminal its focus back.
    pub fn copy_to_clipboard(&self, text: &str) {
        self.runtime
            .block_on(self.client.execute(
                "const field = document.createElement('textarea'); field.value = arguments[0]; \
                 document.body.appendChild(field); field.select(); \
                 const copied = document.execCommand('copy'); field.remove(); \
                 document.querySelector('.xterm-helper-textarea').focus(); return copied;",
                vec![serde_json::json!(text)],
            ))
            .expect("the text is copied");
    }

    /// Presses Ctrl with `key`, as the student would.
    pub fn press_control(&self, key: char) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        use fantoccini::key::Key;
        let keys = KeyActions::new("keyboard".to_string())
            .then(KeyAction::Down {
                value: Key::Control.into(),
            })
            .then(KeyAction::Down { value: key })
            .then(KeyAction::Up { value: key })
            .then(KeyAction::Up {
                value: Key::Control.into(),
            });
        self.runtime.block_on(async {
            self.client.perform_actions(keys).await.unwrap();
            self.client.release_actions().await.unwrap();
        });
    }

    /// Makes the window this size, in pixels.
    pub fn resize(&self, width: u32, height: u32) {
        self.runtime
            .block_on(self.client.set_window_size(width, height))
            .expect("the window resizes");
    }

    /// Resizes the window so that the page itself (the window less the browser's bars) is
    /// `width` × `height`, as a phone's screen would be.
    pub fn resize_page(&self, width: u32, height: u32) {
        self.resize(width, height);
        let inner = self
            .runtime
            .block_on(
                self.client
                    .execute("return [window.innerWidth, window.innerHeight];", vec![]),
            )
            .expect("the page's size");
        let side = |index: usize| inner[index].as_u64().expect("a size") as u32;
        self.resize(
            width + width.saturating_sub(side(0)),
            height + height.saturating_sub(side(1)),
        );
    }

    /// The window as a PNG.
    pub fn screenshot(&self) -> Vec<u8> {
        self.runtime
            .block_on(self.client.screenshot())
            .expect("a screenshot")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let client = self.client.clone();
        let _ = self.runtime.block_on(client.close());
    }
}
