//! `grw-c`: the two steps of building a GRW plugin in C that clang and
//! wasi-libc cannot do themselves.
//!
//! ```text
//! grw-c bindings WIT_DIR WORLD OUT_DIR     # WORLD.h, WORLD.c, WORLD_component_type.o
//! grw-c component MODULE.wasm OUT.wasm     # a wasm32-wasi reactor module -> a component
//! ```
//!
//! Between them, clang compiles the plugin and the bindings for
//! `wasm32-wasi` with `-mexec-model=reactor`; the bindings' object file
//! carries the world, so `component` needs nothing but the module. The
//! module's WASI preview 1 imports are adapted to WASI 0.2, which GRW
//! grants. `sdk/c/build-component.sh` runs all three.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wit_parser::Resolve;

const USAGE: &str = "usage:
  grw-c bindings WIT_DIR WORLD OUT_DIR
  grw-c component MODULE.wasm OUT.wasm";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let done = match args.as_slice() {
        ["bindings", wit, world, out] => bindings(Path::new(wit), world, Path::new(out)),
        ["component", module, out] => component(Path::new(module), Path::new(out)),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grw-c: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the C bindings of `world` (from the WIT package in `wit`) into `out`.
fn bindings(wit: &Path, world: &str, out: &Path) -> Result<()> {
    let mut resolve = Resolve::default();
    let (package, _) = resolve
        .push_path(wit)
        .with_context(|| format!("reading the WIT package in {}", wit.display()))?;
    let world = resolve
        .select_world(&[package], Some(world))
        .with_context(|| {
            format!(
                "no world `{world}` in {}: GRW's worlds are filter-plugin, notifier-plugin and analyzer-plugin",
                wit.display()
            )
        })?;
    let mut files = wit_bindgen_core::Files::default();
    wit_bindgen_c::Opts::default()
        .build()
        .generate(&mut resolve, world, &mut files)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for (name, contents) in files.iter() {
        let path = out.join(name);
        std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Turns the reactor module at `module` into a component at `out`.
fn component(module: &Path, out: &Path) -> Result<()> {
    let bytes = std::fs::read(module).with_context(|| format!("reading {}", module.display()))?;
    if bytes.get(..8) != Some(b"\0asm\x01\0\0\0".as_slice()) {
        bail!(
            "{} is not a core WebAssembly module (was it built with clang --target=wasm32-wasi?)",
            module.display()
        );
    }
    let component = wit_component::ComponentEncoder::default()
        .module(&bytes)
        .context(
            "the module carries no plugin world: link the bindings' WORLD_component_type.o into it",
        )?
        .adapter(
            WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )?
        .validate(true)
        .encode()
        .context("making a component of the module")?;
    std::fs::write(out, component).with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}
