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
    rust_files(&root.join("tests/integration"), &mut files);
    files.push(root.join("tests/soak.rs"));
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

/// The integration tests are modules of one binary, and only the soak test (which measures its
/// own process) is a binary apart: a file in `tests/integration/` that `main.rs` does not declare
/// would never be compiled, and a loose `tests/*.rs` would be one more link against tantivy and
/// SQLite.
#[test]
fn integration_tests_are_modules_of_one_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let is_rust = |path: &Path| path.extension().is_some_and(|e| e == "rs");
    let file_name = |path: &Path| path.file_name().expect("named").to_string_lossy().into_owned();
    let loose: Vec<String> = sorted_entries(&tests)
        .iter()
        .filter(|path| is_rust(path))
        .map(|path| file_name(path))
        .collect();
    assert_eq!(loose, ["soak.rs"], "test files outside tests/integration/");
    let main = std::fs::read_to_string(tests.join("integration/main.rs")).expect("main.rs exists");
    let declared: Vec<&str> = main
        .lines()
        .filter_map(|line| line.trim().strip_prefix("mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .collect();
    let modules: Vec<String> = sorted_entries(&tests.join("integration"))
        .iter()
        .filter(|path| path.is_dir() || (is_rust(path) && file_name(path) != "main.rs"))
        .map(|path| path.file_stem().expect("named").to_string_lossy().into_owned())
        .collect();
    for module in &modules {
        assert!(
            declared.contains(&module.as_str()),
            "tests/integration/main.rs does not declare `mod {module};`"
        );
    }
    assert!(modules.len() >= 12, "found only {modules:?}");
}

fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("readable test tree")
        .map(|entry| entry.expect("entry").path())
        .collect();
    paths.sort();
    paths
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
