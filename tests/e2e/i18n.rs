//! Messages in the user's language, end to end: `explain`, `doctor`,
//! `verify`'s verdict and the errors' hints under `LANG=zh_CN.UTF-8` and
//! under `LANG=C`, snapshotted side by side (`snapshots/e2e__output__i18n_*`);
//! the settings that override the locale (`CUDAENV_LANG`, `lang` in
//! config.toml) and what a wrong one says; and `--json`, which is the same
//! bytes whatever the language.
//!
//! `doctor` reads recorded facts (`--facts`, the H200 machine of
//! tests/fixtures/doctor), so what it finds does not depend on this machine.

use std::path::Path;

use crate::common::*;
use crate::output::Session;

const ZH: (&str, &str) = ("LANG", "zh_CN.UTF-8");
const C: (&str, &str) = ("LANG", "C");

const MISSING_CUDART: &str = "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file: No such file or directory";
const MISSING_DLL: &str =
    "Could not load dynamic library 'cudart64_110.dll'; dlerror: cudart64_110.dll not found";
const CUDNN_MISMATCH: &str = "Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or higher minor version.";
const DRIVER: &str = "RuntimeError: CUDA driver version is insufficient for CUDA runtime version";
const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB";

fn facts() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/doctor/h200-broken.json"
    ))
}

/// `explain` of the guides' messages, in Chinese and in the C locale.
#[test]
fn explain_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    fake_installed(&t.root, "12.4.1+cudnn9.1.0", "12.4.1", Some("9.1.0"));
    let mut s = Session::new(&t, &t.home);
    for lang in [ZH, C] {
        for text in [MISSING_CUDART, MISSING_DLL, CUDNN_MISMATCH, DRIVER, OOM] {
            s.run_with(&[lang], &["explain", text]);
        }
        s.run_with(&[lang], &["explain", "segmentation fault in my own code"]);
    }
    s.snapshot("i18n_explain");
}

/// `explain` of the Windows guides' messages: a cuDNN DLL, the Visual C++
/// runtime, TensorFlow's import failing (not CUDA), Python ≥ 3.8's DLL search.
#[test]
fn explain_windows_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    for lang in [ZH, C] {
        for text in [
            "Could not load dynamic library 'cudnn64_8.dll'; dlerror: cudnn64_8.dll not found",
            "ImportError: Could not find the DLL(s) 'msvcp140_1.dll'. TensorFlow requires that these DLLs be installed in a directory that is named in your %PATH% environment variable.",
            "ImportError: DLL load failed while importing _pywrap_tensorflow_internal: The specified module could not be found.",
            "ImportError: DLL load failed while importing _cuda: The specified module could not be found.",
        ] {
            s.run_with(&[lang], &["explain", text]);
        }
    }
    s.snapshot("i18n_explain_windows");
}

/// `doctor` on a Windows fact set (tests/fixtures/doctor/windows-tf210.json):
/// another toolkit first on PATH, a stale CUDA_PATH_V11_2, msvcp140_1.dll
/// missing, the driver from nvidia-smi.exe.
#[test]
fn doctor_windows_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    std::fs::copy(
        facts().with_file_name("windows-tf210.json"),
        t.home.join("windows-tf210.json"),
    )
    .unwrap();
    let mut s = Session::new(&t, &t.home);
    s.run_with(&[ZH], &["doctor", "--facts", "windows-tf210.json"]);
    s.run_with(&[C], &["doctor", "--facts", "windows-tf210.json"]);
    s.snapshot("i18n_doctor_windows");
}

/// `doctor`'s findings and fixes for a broken machine's recorded facts.
#[test]
fn doctor_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    std::fs::copy(facts(), t.home.join("h200-broken.json")).unwrap();
    let mut s = Session::new(&t, &t.home);
    s.run_with(&[ZH], &["doctor", "--facts", "h200-broken.json"]);
    s.run_with(&[C], &["doctor", "--facts", "h200-broken.json"]);
    s.snapshot("i18n_doctor");
}

/// The errors met first, with their hints: an unknown version, a bad spec,
/// a version that is not installed, nothing to explain, an unknown command.
#[test]
fn errors_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    let mut s = Session::new(&t, &t.home);
    for lang in [ZH, C] {
        s.run_with(&[lang], &["install", "99.9", "--offline"]);
        s.run_with(&[lang], &["install", "12.4", "--offline"]);
        s.run_with(&[lang], &["local", "12.4"]);
        s.run_with(&[lang], &["prefix", "12.4"]);
        s.run_with(&[lang], &["explain", ""]);
        s.run_with(&[lang], &["help", "nosuchtopic"]);
        std::fs::remove_file(t.home.join(".cuda-version")).unwrap();
    }
    s.snapshot("i18n_errors");
}

/// What decides the language: `LC_ALL` over `LC_MESSAGES` over `LANG`;
/// `lang` in config.toml over the locale; `CUDAENV_LANG` over both; a
/// locale cudaenv has no catalogue for, or a Chinese one that is not UTF-8,
/// gives English; a wrong setting is an error naming it.
#[test]
fn the_setting_and_the_locale_choose_the_language() {
    let t = TestEnv::new();
    let hint = |vars: &[(&str, &str)]| {
        let o = t
            .cmd()
            .envs(vars.iter().copied())
            .args(["prefix", "12.4"])
            .output()
            .unwrap();
        assert_code(&o, 3, "prefix of a version that is not installed");
        let err = stderr(&o);
        err.lines()
            .find(|l| l.contains("cudaenv install 12.4"))
            .unwrap_or_else(|| panic!("no hint: {err}"))
            .to_string()
    };
    let chinese = "提示: 运行 `cudaenv install 12.4` 来安装它";
    let english = "hint: run `cudaenv install 12.4` to install it";
    assert_eq!(hint(&[ZH]), chinese);
    assert_eq!(hint(&[C]), english);
    assert_eq!(hint(&[]), english);
    assert_eq!(hint(&[("LC_ALL", "zh_CN.UTF-8"), C]), chinese);
    assert_eq!(hint(&[("LC_ALL", "C"), ZH]), english);
    assert_eq!(
        hint(&[("LC_ALL", ""), ("LC_MESSAGES", "zh_CN.utf8"), C]),
        chinese
    );
    assert_eq!(hint(&[("LANG", "zh_TW.UTF-8")]), english);
    assert_eq!(hint(&[("LANG", "zh_CN.GB18030")]), english);
    assert_eq!(hint(&[("CUDAENV_LANG", "zh-CN"), C]), chinese);
    assert_eq!(hint(&[("CUDAENV_LANG", "en"), ZH]), english);
    std::fs::create_dir_all(&t.root).unwrap();
    std::fs::write(t.root.join("config.toml"), "lang = \"zh-CN\"\n").unwrap();
    assert_eq!(hint(&[C]), chinese);
    assert_eq!(hint(&[("CUDAENV_LANG", "en")]), english);
    std::fs::write(t.root.join("config.toml"), "lang = \"en\"\n").unwrap();
    assert_eq!(hint(&[ZH]), english);

    let o = t
        .cmd()
        .env("CUDAENV_LANG", "fr")
        .args(["root"])
        .output()
        .unwrap();
    let err = assert_code(&o, 2, "an unknown CUDAENV_LANG");
    assert!(
        err.contains("CUDAENV_LANG") && err.contains("`en` or `zh-CN`"),
        "{err}"
    );
    std::fs::write(t.root.join("config.toml"), "lang = \"klingon\"\n").unwrap();
    let o = t
        .cmd()
        .args(["install", "12.4", "--dry-run", "--offline"])
        .output()
        .unwrap();
    let err = assert_code(&o, 2, "an unknown lang in config.toml");
    assert!(
        err.contains("config.toml") && err.contains("lang: `klingon`"),
        "{err}"
    );
}

/// `--json` is English and the same bytes in every language.
#[test]
fn json_is_the_same_in_every_language() {
    let t = TestEnv::new();
    let facts = facts().to_str().unwrap();
    for args in [
        vec!["explain", "--json", MISSING_DLL],
        vec!["explain", "--json", CUDNN_MISMATCH],
        vec!["doctor", "--json", "--facts", facts],
    ] {
        let run = |lang: (&str, &str)| {
            let o = t.cmd().env(lang.0, lang.1).args(&args).output().unwrap();
            o.stdout
        };
        let (zh, c) = (run(ZH), run(C));
        assert_eq!(
            String::from_utf8_lossy(&zh),
            String::from_utf8_lossy(&c),
            "{args:?}"
        );
        let text = String::from_utf8_lossy(&zh);
        assert!(!text.is_empty(), "{args:?}");
        assert!(
            !text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "Chinese in --json: {text}"
        );
    }
}

/// `verify`'s verdict on a machine without a driver, in Chinese: the
/// problem's hint says what to do in the user's language.
#[test]
#[cfg_attr(
    cudaenv_has_driver,
    ignore = "this machine has an NVIDIA driver (libcuda.so.1): the test checks what happens without one"
)]
fn verify_without_a_driver_in_chinese() {
    let t = TestEnv::new();
    crate::verify::stack(&t, "stack");
    let mut s = Session::new(&t, &t.home);
    s.run_with(&[ZH], &["verify", "stack"]);
    s.snapshot("i18n_verify_without_a_driver");
}

/// Texts that other modules hand to a message — what selected the active
/// version, the cuDNN table's family rule, the libraries beside the
/// toolkit, who provides a library, the hints a source gives when it has
/// not got what was asked — in Chinese under a Chinese locale, not English
/// fragments inside a Chinese sentence.
#[test]
fn texts_from_other_modules_in_chinese_and_in_the_c_locale() {
    let t = TestEnv::new();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(facts()).unwrap()).unwrap();
    // No version set (the default), and a cuDNN newer than the cuDNN table
    // with NCCL beside it; then a global version, and CUDAENV_VERSION.
    for (file, origin, kind) in [
        ("default.json", "default: no version is set", "default"),
        (
            "global.json",
            "/tmp/ce-home/root/version (global)",
            "global",
        ),
        (
            "shell.json",
            "the CUDAENV_VERSION environment variable",
            "shell",
        ),
    ] {
        let mut r = report.clone();
        let active = &mut r["facts"]["active"];
        active["origin"] = origin.into();
        active["origin_kind"] = kind.into();
        active["cudnn"] = "9.40.0.1".into();
        active["libraries"] = serde_json::json!({ "nccl": "2.28.3" });
        std::fs::write(t.home.join(file), serde_json::to_string(&r).unwrap()).unwrap();
    }
    let mut s = Session::new(&t, &t.home);
    for lang in [ZH, C] {
        for file in ["default.json", "global.json", "shell.json"] {
            s.run_with(&[lang], &["doctor", "--facts", file]);
        }
        s.run_with(
            &[lang],
            &[
                "explain",
                "libcuda.so.1: cannot open shared object file: No such file or directory",
            ],
        );
        s.run_with(
            &[lang],
            &[
                "explain",
                "Loaded runtime CuDNN library: 9.0.0 but source was compiled with: 9.40.0.",
            ],
        );
        s.run_with(
            &[lang],
            &["install", "10.2", "--source", "pypi", "--offline"],
        );
        s.run_with(
            &[lang],
            &[
                "install",
                "12.4+nccl2",
                "--source",
                "nvidia",
                "--offline",
                "--dry-run",
            ],
        );
        s.run_with(
            &[lang],
            &["install", "9.2", "--source", "legacy", "--offline"],
        );
        // The install guard's refusals, for a target machine.
        for [spec, flag, value] in [
            ["13.0", "--target-driver", "450.80.02"],
            ["11.2", "--target-arch", "sm_90"],
        ] {
            s.run_with(
                &[lang],
                &[
                    "install",
                    spec,
                    "--strict",
                    "--dry-run",
                    "--offline",
                    flag,
                    value,
                ],
            );
        }
    }
    s.snapshot("i18n_texts_from_other_modules");
}

/// `cudaenv help`: a topic with a Chinese version (docs/zh-CN/) is shown in
/// Chinese under a Chinese locale and in English under `LANG=C`; the topic
/// list names such topics by their Chinese titles and marks the rest as
/// English; a topic without a translation is the English page, its hint in
/// Chinese. Every link of a Chinese page leads to a file of the repository.
#[test]
fn help_topics_in_chinese_where_they_exist() {
    let t = TestEnv::new();
    let run = |lang: (&str, &str), args: &[&str]| {
        let o = t.cmd().env(lang.0, lang.1).args(args).output().unwrap();
        assert_code(&o, 0, &format!("{lang:?} {args:?}"));
        (stdout(&o), stderr(&o))
    };
    let zh_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/zh-CN");
    let mut pages = 0;
    for entry in std::fs::read_dir(&zh_dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let chinese = std::fs::read_to_string(&path).unwrap();
        let english = std::fs::read_to_string(zh_dir.join(format!("../{name}.md"))).unwrap();
        assert_eq!(run(ZH, &["help", &name]).0, chinese, "{name}");
        assert_eq!(run(C, &["help", &name]).0, english, "{name}");
        // The tables in step: the same rows (the code their first cell
        // starts with), in order.
        let rows = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix("| `"))
                .map(|l| l.split('`').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(rows(&chinese), rows(&english), "{name}: the tables' rows");
        let title = chinese
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("# ")
            .replace('`', "");
        assert!(run(ZH, &["help"]).0.contains(&title), "{name}: {title}");
        let mut rest = chinese.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            let target = rest[..rest.find(')').unwrap()].split('#').next().unwrap();
            if !target.starts_with("http") && !target.is_empty() {
                assert!(
                    zh_dir.join(target).exists(),
                    "docs/zh-CN/{name}.md links to {target}, which does not exist"
                );
            }
        }
        pages += 1;
    }
    assert!(pages >= 2, "{pages} Chinese pages");
    let (list, _) = run(ZH, &["help"]);
    assert!(list.contains("文档（`cudaenv help 主题`）："), "{list}");
    assert!(
        list.contains("Shell integration: the hook, shims and cudaenv shell（英文）"),
        "{list}"
    );
    let (list, _) = run(C, &["help"]);
    assert!(
        list.contains("Documentation (`cudaenv help TOPIC`):"),
        "{list}"
    );
    assert!(!list.contains("英文"), "{list}");
    // Untranslated: the English page, the hint in the reader's language.
    let (page, hint) = run(ZH, &["help", "shell"]);
    assert!(page.starts_with("# Shell integration"), "{page}");
    assert_eq!(
        hint, "提示: `shell` 命令的选项：`cudaenv shell --help`\n",
        "{hint}"
    );
}
