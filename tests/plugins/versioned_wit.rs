// Shared by the build scripts of the `newer-patch` and `incompatible` test
// plugins (included with `include!`): writes a copy of GRW's plugin WIT with
// the package version changed to `VERSION`, which the including script
// defines. Deriving it from the real file at build time keeps everything but
// the version identical, however the contract evolves.

fn write_versioned_wit() {
    use std::path::PathBuf;
    use std::{env, fs};

    let source =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../../wit/plugin.wit");
    println!("cargo::rerun-if-changed={}", source.display());
    let wit =
        fs::read_to_string(&source).unwrap_or_else(|e| panic!("reading {}: {e}", source.display()));
    let declaration = "package grw:plugin@0.2.0;";
    assert!(
        wit.contains(declaration),
        "{} no longer declares `{declaration}`; update tests/plugins/versioned_wit.rs",
        source.display()
    );
    let wit = wit.replace(declaration, &format!("package grw:plugin@{VERSION};"));
    let dir = PathBuf::from(env::var("OUT_DIR").unwrap()).join("wit");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("plugin.wit"), wit).unwrap();
}
