//! Which toolchain built a component, so that a refusal can tell its author
//! what to change in the words of their language.
//!
//! Told from marks the toolchains leave in the file: componentize-py links
//! its runtime library by name, componentize-js embeds StarlingMonkey,
//! wit-bindgen's Rust and C generators record themselves in the
//! `producers` section, as do rustc and clang. A component none of them
//! marks gets the language-neutral advice.

use memchr::memmem;

/// A toolchain GRW knows how to advise about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Toolchain {
    /// Rust with `grw-sdk` (wit-bindgen).
    Rust,
    /// Python with componentize-py.
    Python,
    /// JavaScript with componentize-js (or jco, which uses it).
    JavaScript,
    /// C with clang and wit-bindgen's C generator.
    C,
}

impl Toolchain {
    /// The toolchain that built `wasm`, if its marks are found.
    pub fn of(wasm: &[u8]) -> Option<Toolchain> {
        let has = |mark: &str| memmem::find(wasm, mark.as_bytes()).is_some();
        if has("componentize_py_runtime") {
            Some(Toolchain::Python)
        } else if has("StarlingMonkey") || has("componentize-js") {
            Some(Toolchain::JavaScript)
        } else if has("wit-bindgen-rust") || has("/rustc/") {
            Some(Toolchain::Rust)
        } else if has("wit-bindgen-c") || has("clang") {
            Some(Toolchain::C)
        } else {
            None
        }
    }

    /// How to build a component for `world` (`filter-plugin`, ...) exporting
    /// `interface` (`filter`, ...) with this toolchain.
    pub fn build_hint(self, world: &str, interface: &str) -> String {
        match self {
            Toolchain::Rust => format!(
                "build a library crate (`crate-type = [\"cdylib\"]`) for wasm32-wasip2 that exports the world with grw_sdk::export_{interface}!"
            ),
            Toolchain::Python => {
                let class = capitalized(interface);
                format!(
                    "with componentize-py, name the world: `componentize-py -d wit -w {world} componentize app -o plugin.wasm`, where `wit` holds GRW's plugin.wit and the module `app` defines `class {class}` (grw_sdk.export_{interface} makes one)"
                )
            }
            Toolchain::JavaScript => format!(
                "with componentize-js, pass `worldName: \"{world}\"` and GRW's wit directory, and export `{interface}` from the module (`export const {interface} = export{}(...)` with grw-sdk.js)",
                capitalized(interface)
            ),
            Toolchain::C => format!(
                "build with GRW's sdk/c/build-component.sh {world} NAME DIR OUT (or generate the bindings with `grw-c bindings wit {world} DIR`) and implement the exported `{interface}` functions"
            ),
        }
    }

    /// How to rebuild against the contract this GRW speaks.
    pub fn update_hint(self) -> &'static str {
        match self {
            Toolchain::Rust => "with grw-sdk, update the SDK",
            Toolchain::Python => {
                "regenerate it with componentize-py against this GRW's wit/plugin.wit (`grw plugin new` writes a copy)"
            }
            Toolchain::JavaScript => {
                "run componentize-js again against this GRW's wit/plugin.wit (`grw plugin new` writes a copy)"
            }
            Toolchain::C => {
                "regenerate the bindings against this GRW's wit/plugin.wit (sdk/c/build-component.sh does, with grw-c)"
            }
        }
    }

    /// Why the toolchain may have added an import GRW refuses, and how to
    /// leave it out.
    pub fn import_hint(self, import: &str) -> Option<&'static str> {
        match (self, import) {
            (Toolchain::JavaScript, i) if i.starts_with("wasi:http/") => Some(
                "componentize-js adds wasi:http for `fetch` unless told not to: pass `disableFeatures: [\"http\", \"fetch-event\"]` to componentize() (sdk/js/build.mjs does), and send requests with grw-sdk.js's http helpers",
            ),
            (Toolchain::Python, i) if i.starts_with("wasi:http/") => Some(
                "componentize-py imports wasi:http when the app imports it (e.g. the `wit_world.imports` of a wasi:http world): send requests with grw_sdk.http instead",
            ),
            _ => None,
        }
    }

    /// The language's name, as its authors say it.
    pub fn language(self) -> &'static str {
        match self {
            Toolchain::Rust => "Rust",
            Toolchain::Python => "Python",
            Toolchain::JavaScript => "JavaScript",
            Toolchain::C => "C",
        }
    }
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_from_the_marks_in_the_file() {
        assert_eq!(
            Toolchain::of(b"\0asm..libcomponentize_py_runtime.so.."),
            Some(Toolchain::Python)
        );
        assert_eq!(
            Toolchain::of(b"..StarlingMonkey.."),
            Some(Toolchain::JavaScript)
        );
        assert_eq!(
            Toolchain::of(b"producers..wit-bindgen-rust.."),
            Some(Toolchain::Rust)
        );
        assert_eq!(Toolchain::of(b"\0asm\x0d\0\x01\0"), None);
    }

    #[test]
    fn hints_name_the_language_s_own_words() {
        assert!(
            Toolchain::Python
                .build_hint("filter-plugin", "filter")
                .contains("-w filter-plugin")
        );
        assert!(
            Toolchain::JavaScript
                .build_hint("notifier-plugin", "notifier")
                .contains("export const notifier = exportNotifier(")
        );
        assert!(
            Toolchain::JavaScript
                .import_hint("wasi:http/types@0.2.10")
                .unwrap()
                .contains("disableFeatures")
        );
        assert_eq!(Toolchain::Rust.import_hint("wasi:http/types@0.2.0"), None);
    }
}
