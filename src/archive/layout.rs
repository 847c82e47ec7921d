//! Persistence-root naming: project and session directory names, and the identity
//! binding that ties a header to the directory its log was found in.

/// Code units kept as they are in directory names.
fn is_safe_unit(unit: u16) -> bool {
    matches!(unit, 0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A | 0x2E | 0x5F | 0x2D)
}

/// The session directory name for an id: unsafe UTF-16 code units (and `~`) as `~XXXX`.
pub fn session_dir_name(id: &str) -> String {
    session_dir_name_of_units(&id.encode_utf16().collect::<Vec<_>>())
}

/// [`session_dir_name`] over raw UTF-16 code units (ids may hold lone surrogates).
pub fn session_dir_name_of_units(units: &[u16]) -> String {
    match units {
        [0x2E] => return "~002E".into(),
        [0x2E, 0x2E] => return "~002E~002E".into(),
        _ => {}
    }
    let mut out = String::with_capacity(units.len());
    for &unit in units {
        if is_safe_unit(unit) {
            out.push(char::from(unit as u8));
        } else {
            out.push_str(&format!("~{unit:04X}"));
        }
    }
    out
}

/// The project directory name for a cwd (`None` = `_no-cwd`).
pub fn project_dir_name(cwd: Option<&str>) -> String {
    let Some(cwd) = cwd else {
        return "_no-cwd".into();
    };
    let mut slug = String::new();
    let mut last_was_separator = false;
    for unit in cwd.encode_utf16() {
        if matches!(unit, 0x2F | 0x5C | 0x3A) {
            if !last_was_separator {
                slug.push('-');
            }
            last_was_separator = true;
            continue;
        }
        last_was_separator = false;
        if is_safe_unit(unit) {
            slug.push(char::from(unit as u8));
        } else {
            slug.push_str(&format!("~{unit:04X}"));
        }
    }
    let trimmed = slug.trim_start_matches('-');
    let mut slug: String = if trimmed.is_empty() {
        "root".into()
    } else {
        trimmed.into()
    };
    // The slug is ASCII, so truncating by bytes is truncating by characters.
    slug.truncate(251);
    format!("--{slug}--")
}

/// Whether a directory name is a project directory of a persistence root.
pub fn is_project_dir(name: &str) -> bool {
    name == "_no-cwd" || (name.len() >= 4 && name.starts_with("--") && name.ends_with("--"))
}

/// DSH's export ZIP name for an id: every code unit outside `[A-Za-z0-9_-]` becomes `_`.
pub fn export_safe_id(id: &str) -> String {
    id.encode_utf16()
        .map(|u| {
            if matches!(u, 0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A | 0x5F | 0x2D) {
                char::from(u as u8)
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_names_follow_the_spec_examples() {
        assert_eq!(project_dir_name(Some("/home/dev/app")), "--home-dev-app--");
        assert_eq!(project_dir_name(Some("C:\\Users\\me\\proj")), "--C-Users-me-proj--");
        assert_eq!(project_dir_name(Some("/home/a b")), "--home-a~0020b--");
        assert_eq!(project_dir_name(Some("/")), "--root--");
        assert_eq!(project_dir_name(Some("/x//y:\\z~")), "--x-y-z~007E--");
        assert_eq!(project_dir_name(None), "_no-cwd");
        assert_eq!(project_dir_name(Some(&"/a".repeat(200))).len(), 255);
    }

    #[test]
    fn session_names_are_injective_escapes() {
        assert_eq!(session_dir_name("sess-7c1d"), "sess-7c1d");
        assert_eq!(session_dir_name("."), "~002E");
        assert_eq!(session_dir_name(".."), "~002E~002E");
        assert_eq!(session_dir_name("a~b/é😀"), "a~007Eb~002F~00E9~D83D~DE00");
        assert_eq!(export_safe_id("a.b/c"), "a_b_c");
    }
}
