//! What `nvidia-smi` says about the driver, in both of its banners.
//!
//! Up to the 605 drivers the banner reads `Driver Version: 580.159.04   CUDA
//! Version: 13.0`; from the 610 drivers it reads `KMD Version: 610.57.04
//! CUDA UMD Version: 13.3` (the kernel-mode driver and the CUDA user-mode
//! driver, which may come from different packages). Both are understood.
//! The banner is a display, though: callers prefer the driver's own file
//! (`/proc/driver/nvidia/version`) and `nvidia-smi
//! --query-gpu=driver_version`, whose CSV answer did not change, and read the
//! banner for what only it says (the CUDA version the driver supports).

/// The driver and CUDA versions a banner names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Banner {
    pub driver: Option<String>,
    pub cuda: Option<String>,
}

/// The arguments that ask for the driver version alone.
pub const QUERY_DRIVER: [&str; 2] = ["--query-gpu=driver_version", "--format=csv,noheader"];

/// Reads either banner. Labels are matched whole (`CUDA UMD Version:` is not
/// `CUDA Version:`), and a value must look like a version.
pub fn parse_banner(text: &str) -> Banner {
    Banner {
        driver: value(text, "KMD Version:").or_else(|| value(text, "Driver Version:")),
        cuda: value(text, "CUDA UMD Version:").or_else(|| value(text, "CUDA Version:")),
    }
}

/// The first line of `--query-gpu=driver_version --format=csv,noheader`
/// (one line per GPU, all the same driver).
pub fn parse_query(text: &str) -> Option<String> {
    let v = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    is_version(v).then(|| v.to_string())
}

fn value(text: &str, label: &str) -> Option<String> {
    let mut rest = text;
    while let Some(i) = rest.find(label) {
        // `CUDA Version:` must not match inside `CUDA UMD Version:`'s tail.
        let whole = i == 0 || !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric());
        let after = &rest[i + label.len()..];
        if whole
            && let Some(v) = after.split_whitespace().next()
            && is_version(v)
        {
            return Some(v.to_string());
        }
        rest = after;
    }
    None
}

fn is_version(v: &str) -> bool {
    !v.is_empty()
        && v.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "Tue Dec  1 10:00:00 2026\n+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 580.159.04             Driver Version: 580.159.04     CUDA Version: 13.0     |\n";
    const NEW: &str = "Tue Dec  1 10:00:00 2026\n+-----------------------------------------------------------------------------------------+\n| NVIDIA-SMI 610.57.04        KMD Version: 610.57.04        CUDA UMD Version: 13.3         |\n";

    #[test]
    fn both_banners() {
        assert_eq!(
            parse_banner(OLD),
            Banner {
                driver: Some("580.159.04".into()),
                cuda: Some("13.0".into())
            }
        );
        assert_eq!(
            parse_banner(NEW),
            Banner {
                driver: Some("610.57.04".into()),
                cuda: Some("13.3".into())
            }
        );
        assert_eq!(parse_banner("NVIDIA-SMI has failed"), Banner::default());
        // A label with no version after it is not a version.
        assert_eq!(
            parse_banner("KMD Version: N/A CUDA UMD Version: N/A").driver,
            None
        );
    }

    #[test]
    fn the_query_answer() {
        assert_eq!(
            parse_query("610.57.04\n610.57.04\n").as_deref(),
            Some("610.57.04")
        );
        assert_eq!(parse_query("\n580.65.06\n").as_deref(), Some("580.65.06"));
        assert_eq!(parse_query("[N/A]\n"), None);
        assert_eq!(parse_query(""), None);
    }
}
