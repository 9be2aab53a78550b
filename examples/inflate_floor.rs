//! The inflate floor of `scripts/bench-install.sh`: how long the members of
//! the given wheels take to inflate with the inflater the install uses
//! (libdeflate, one call per member), on every core, and nothing else.
//!
//! The wheels are read into memory and one output buffer per thread is
//! touched before the clock starts, so neither disk nor page faults count;
//! members go largest first to whichever thread is free, as in the install.
//! No CRC-32 is computed and nothing is written: the install does both on
//! top of this, so no install can beat this figure on the same cores.
//!
//! With `--largest`, only the largest member is inflated, on one thread,
//! three times by each inflater the build has: libdeflate in one call, and
//! zlib-rs (`flate2`) streaming, fed 16 MiB at a time as a download would
//! deliver it, into the same whole output buffer. That member bounds the
//! install, and the figures say which inflater is the faster on it.
//!
//! Usage: inflate_floor [--threads N] [--largest] WHEEL...

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

struct Member {
    wheel: usize,
    data: std::ops::Range<usize>,
    size: usize,
    deflated: bool,
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    if args.first().map(String::as_str) == Some("--threads") && args.len() > 1 {
        threads = args[1].parse().expect("--threads takes a number");
        args.drain(..2);
    }
    let only_largest = args.first().map(String::as_str) == Some("--largest");
    if only_largest {
        args.remove(0);
    }
    if args.is_empty() {
        eprintln!("usage: inflate_floor [--threads N] [--largest] WHEEL...");
        std::process::exit(2);
    }
    let wheels: Vec<Vec<u8>> = args
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{p}: {e}")))
        .collect();
    let mut members = Vec::new();
    for (w, bytes) in wheels.iter().enumerate() {
        let zip = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..]))
            .unwrap_or_else(|e| panic!("{}: {e}", args[w]));
        for i in 0..zip.len() {
            let e = zip.by_index_data(i).expect("a member");
            let deflated = match e.compression() {
                zip::CompressionMethod::Deflated => true,
                zip::CompressionMethod::Stored => false,
                other => panic!("{}: unsupported method {other}", args[w]),
            };
            if e.is_dir() || e.size() == 0 {
                continue;
            }
            // The data follows the local header's name and extra field.
            let at = e.header_start() as usize;
            let field = |o: usize| u16::from_le_bytes([bytes[at + o], bytes[at + o + 1]]) as usize;
            let start = at + 30 + field(26) + field(28);
            members.push(Member {
                wheel: w,
                data: start..start + e.compressed_size() as usize,
                size: e.size() as usize,
                deflated,
            });
        }
    }
    members.sort_by_key(|m| std::cmp::Reverse(m.size));
    let largest = members.first().map_or(0, |m| m.size);
    let total: usize = members.iter().map(|m| m.size).sum();
    if only_largest {
        let m = members.first().expect("a member");
        assert!(m.deflated, "the largest member is stored, not deflated");
        compare(&wheels[m.wheel][m.data.clone()], m.size);
        return;
    }
    let threads = threads.clamp(1, members.len().max(1));
    // Touched now, so that the timed part takes no page faults.
    let mut buffers: Vec<Vec<u8>> = (0..threads).map(|_| vec![1u8; largest]).collect();

    let next = AtomicUsize::new(0);
    let start = Instant::now();
    std::thread::scope(|s| {
        for out in buffers.iter_mut() {
            let (members, wheels, next) = (&members, &wheels, &next);
            s.spawn(move || {
                let mut inflater = libdeflater::Decompressor::new();
                while let Some(m) = members.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let input = &wheels[m.wheel][m.data.clone()];
                    let out = &mut out[..m.size];
                    if m.deflated {
                        let n = inflater
                            .deflate_decompress(input, out)
                            .expect("valid deflate data");
                        assert_eq!(n, m.size, "a member's declared size");
                    } else {
                        out.copy_from_slice(input);
                    }
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{secs:.2} s ({} members, {:.0} MB out, largest {:.0} MB, {threads} threads)",
        members.len(),
        total as f64 / 1e6,
        largest as f64 / 1e6
    );
}

/// Inflates one member three times by each inflater, into one touched
/// buffer, and prints each one's times.
fn compare(input: &[u8], size: usize) {
    const PIECE: usize = 16 << 20;
    let mut out = vec![1u8; size];
    fn time(out: &mut [u8], f: &mut dyn FnMut(&mut [u8])) -> Vec<f64> {
        (0..3)
            .map(|_| {
                let start = Instant::now();
                f(out);
                start.elapsed().as_secs_f64()
            })
            .collect()
    }
    let whole = time(&mut out, &mut |out| {
        let n = libdeflater::Decompressor::new()
            .deflate_decompress(input, out)
            .expect("valid deflate data");
        assert_eq!(n, size, "the member's declared size");
    });
    let expected = crc32fast::hash(&out);
    let streamed = time(&mut out, &mut |out| {
        let mut z = flate2::Decompress::new(false);
        let mut arrived = 0;
        while arrived < input.len() {
            arrived = (arrived + PIECE).min(input.len());
            loop {
                let (i, o) = (z.total_in() as usize, z.total_out() as usize);
                let status = z
                    .decompress(
                        &input[i..arrived],
                        &mut out[o..],
                        flate2::FlushDecompress::None,
                    )
                    .expect("valid deflate data");
                let stuck = z.total_in() as usize == i && z.total_out() as usize == o;
                if status == flate2::Status::StreamEnd || stuck || z.total_in() as usize == arrived
                {
                    break;
                }
            }
        }
        assert_eq!(z.total_out() as usize, size, "the member's declared size");
    });
    assert_eq!(crc32fast::hash(&out), expected, "both inflaters agree");
    let show = |t: &[f64]| {
        t.iter()
            .map(|s| format!("{s:.2}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "largest member, {:.0} MB out, one thread: libdeflate (one call) {} s; zlib-rs (streaming, {} MiB pieces) {} s",
        size as f64 / 1e6,
        show(&whole),
        PIECE >> 20,
        show(&streamed)
    );
}
