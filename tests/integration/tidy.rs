//! Repository hygiene: every source file says what it owns in its first line, and the docs
//! name every module.
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source tree") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    assert!(files.len() > 10, "found only {} files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| !std::fs::read_to_string(f).expect("utf8 source").starts_with("//! "))
        .map(|f| f.display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a leading `//!` line: {missing:?}");
}

#[test]
fn architecture_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for file in files {
        let relative = file.strip_prefix(root).expect("inside the repo").display().to_string();
        let module = relative.trim_end_matches("/mod.rs").trim_end_matches(".rs").to_owned()
            + if relative.ends_with("/mod.rs") { "/" } else { ".rs" };
        assert!(
            architecture.contains(&module),
            "ARCHITECTURE.md does not mention {module}"
        );
    }
}

/// The README's JSON-RPC table lists exactly the API's method table, in its order, so a method
/// cannot exist in one place and not the other.
#[test]
fn readme_lists_every_method_of_the_table() {
    use dsh_session_search::api::Method;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md exists");
    let section = readme
        .split("## JSON-RPC")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a JSON-RPC section");
    let listed: Vec<&str> = section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    let table: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
    assert_eq!(listed, table);
}
