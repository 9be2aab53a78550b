//! Regression tests for bugs the battery found, each named after its bug.

use super::support::fake_version;
use crate::common::TestEnv;

/// `exec` declared `--version SPEC` while clap propagated its own `--version`
/// flag to every subcommand: clap's debug assertion panicked (exit 101) on
/// every `cudaenv exec`, before any argument was looked at.
#[test]
fn exec_version_option_clashed_with_clap_version_flag() {
    let env = TestEnv::new();
    let v = fake_version(&env.root, "12.4.1", "12.4.1");
    let out = env
        .cmd()
        .args([
            "exec",
            "--version",
            "12.4.1",
            "--",
            "sh",
            "-c",
            "printf %s \"$PATH\"",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        path.split(':').next(),
        Some(v.join("bin").to_str().unwrap())
    );
    let plain = env.cmd().args(["exec", "--", "true"]).output().unwrap();
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
}

// Hostile zips the unpacker accepted or refused without naming the member.

#[test]
fn zip_local_header_name_disagreeing_with_central_directory_was_accepted() {
    super::hostile_zip::run_case("local header name differs from the central directory");
}

#[test]
fn zip_overlapping_members_were_accepted() {
    super::hostile_zip::run_case("overlapping members (one body, many names)");
}

#[test]
fn archive_shipping_cudaenv_completeness_marker_was_accepted() {
    super::hostile_zip::run_case("cudaenv's own completeness marker");
    super::hostile_zip::run_case("cudaenv's own metadata");
}

#[test]
fn newline_in_member_name_was_accepted() {
    super::hostile_zip::run_case("newline in a name");
}

#[test]
fn overlong_member_name_failed_as_io_error_not_bad_archive() {
    super::hostile_zip::run_case("absurd depth");
    super::hostile_zip::run_case("overlong component");
}

#[test]
fn zip_trailing_garbage_was_accepted() {
    super::hostile_zip::run_case("trailing garbage");
}

#[test]
fn duplicate_and_encrypted_zip_members_were_not_named() {
    super::hostile_zip::run_case("duplicate changing type (file then symlink)");
    super::hostile_zip::run_case("encrypted member");
}

/// Bytes after a tar's end-of-archive blocks were silently ignored (a file
/// that is a valid tarball to cudaenv and something else to another reader).
#[test]
fn tar_trailing_garbage_after_end_blocks_was_accepted() {
    super::hostile_tar::run_case("trailing garbage after the end blocks");
}
