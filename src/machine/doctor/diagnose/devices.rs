//! The devices a program can reach: `CUDA_VISIBLE_DEVICES`, and the device
//! nodes (`/dev/nvidia*`, WSL's `/dev/dxg`) it needs to open.

use crate::i18n::Msg;
use crate::machine::doctor::facts::Facts;
use crate::msg;

use super::Out;

pub(super) fn environment_findings(f: &Facts, o: &mut Out) {
    if let Some(cvd) = &f.env.cuda_visible_devices {
        let t = cvd.trim();
        if t.is_empty() || t == "-1" {
            let msg = msg!("doctor-visible-devices-none", value = format!("{cvd:?}"));
            if f.host.gpus.is_empty() {
                o.warn(
                    "visible-devices",
                    msg,
                    msg!("doctor-visible-devices-none-fix-no-gpu"),
                );
            } else {
                o.error(
                    "visible-devices",
                    msg,
                    msg!("doctor-visible-devices-none-fix"),
                );
            }
        } else {
            let n = f.host.gpus.len();
            let bad: Vec<&str> = t
                .split(',')
                .map(str::trim)
                .filter(|x| x.parse::<usize>().is_ok_and(|i| n > 0 && i >= n))
                .collect();
            if bad.is_empty() {
                o.ok(
                    "visible-devices",
                    Msg::verbatim(format!("CUDA_VISIBLE_DEVICES={t}")),
                );
            } else {
                o.warn(
                    "visible-devices",
                    msg!("doctor-visible-devices-bad", bad = bad.join(", ")),
                    msg!("doctor-visible-devices-bad-fix", count = n),
                );
            }
        }
    }
    let has_driver = !f.host.driver_versions.is_empty();
    // Windows has no device nodes: the driver is reached through its DLLs.
    if f.windows.is_some() {
        return;
    }
    if f.host.platform.wsl {
        match f.device_nodes.iter().find(|d| d.path == "/dev/dxg") {
            Some(d) if !(d.readable && d.writable) => o.error(
                "device-nodes",
                msg!("doctor-dxg-denied"),
                msg!("doctor-dxg-denied-fix"),
            ),
            None if f.host.platform.wsl_libcuda => o.error(
                "device-nodes",
                msg!("doctor-dxg-missing"),
                msg!("doctor-dxg-missing-fix"),
            ),
            _ => {}
        }
        return;
    }
    if !has_driver {
        return;
    }
    let denied: Vec<&str> = f
        .device_nodes
        .iter()
        .filter(|d| !(d.readable && d.writable))
        .map(|d| d.path.as_str())
        .collect();
    if !denied.is_empty() {
        o.error(
            "device-nodes",
            msg!("doctor-device-nodes-denied", nodes = denied.join(", ")),
            msg!("doctor-device-nodes-denied-fix"),
        );
    }
    let has = |p: &str| f.device_nodes.iter().any(|d| d.path == p);
    let has_gpu_node = f.device_nodes.iter().any(|d| {
        d.path
            .strip_prefix("/dev/nvidia")
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    });
    if !has("/dev/nvidiactl") || !has_gpu_node {
        o.error(
            "device-nodes",
            msg!("doctor-device-nodes-missing"),
            msg!("doctor-device-nodes-missing-fix"),
        );
    } else if !has("/dev/nvidia-uvm") {
        o.warn(
            "device-nodes",
            msg!("doctor-uvm-missing"),
            msg!("doctor-uvm-missing-fix"),
        );
    } else if denied.is_empty() {
        o.ok(
            "device-nodes",
            msg!("doctor-device-nodes-ok", count = f.device_nodes.len()),
        );
    }
}
