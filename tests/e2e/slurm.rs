//! docs/clusters.md's Slurm job script on a real Slurm: Debian's `slurmctld`,
//! `slurmd` and `munged` started as a one-node cluster in a temporary
//! directory (their own key, socket, ports, state and logs; the node's one
//! "GPU" is a GRES backed by /dev/null, so `#SBATCH --gpus=1` is scheduled as
//! on a GPU node). `sbatch` runs the documented script from the project's
//! directory, and `srun` runs a step under a modulefile that `cudaenv module
//! export` wrote; each prints the CUDA runtime the loader gave it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, assert_success, fake_installed, stdout};

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The one-node cluster; its daemons end with it.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join("log").join(name)).unwrap_or_default()
    }

    fn logs(&self) -> String {
        ["munged.log", "slurmctld.log", "slurmd.log"]
            .iter()
            .map(|n| format!("--- {n}\n{}", self.log(n)))
            .collect()
    }

    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["munge", "state", "spool", "log"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        let key: Vec<u8> = (0..1024u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let key_file = d.join("munge/munge.key");
        std::fs::write(&key_file, key).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
            std::fs::set_permissions(d.join("munge"), std::fs::Permissions::from_mode(0o700))
                .unwrap();
        }
        let socket = d.join("munge/munge.socket.2");
        let user = stdout(&Command::new("id").arg("-un").output().unwrap())
            .trim()
            .to_owned();
        let host = stdout(&Command::new("hostname").arg("-s").output().unwrap())
            .trim()
            .to_owned();
        let p = |s: &str| d.join(s).display().to_string();
        let conf = format!(
            "ClusterName=cudaenv-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={slurmd_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={slurmd_log}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
GresTypes=gpu
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=node1 NodeAddr=127.0.0.1 CPUs={cpus} Gres=gpu:1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
",
            ctld = free_port(),
            slurmd = free_port(),
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("log/slurmctld.log"),
            slurmd_log = p("log/slurmd.log"),
            cpus = std::thread::available_parallelism().map_or(1, |n| n.get()),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        std::fs::write(
            d.join("gres.conf"),
            "NodeName=node1 Name=gpu File=/dev/null\n",
        )
        .unwrap();

        let mut cluster = Cluster {
            dir,
            daemons: Vec::new(),
        };
        let spawn = |c: &mut Command| {
            c.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("{c:?}: {e}"))
        };
        let d = cluster.dir.path().to_owned();
        cluster.daemons.push(spawn(
            Command::new("/usr/sbin/munged")
                .args(["--foreground", "--force"])
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--key-file={}", key_file.display()))
                .arg(format!("--log-file={}", d.join("log/munged.log").display()))
                .arg(format!(
                    "--pid-file={}",
                    d.join("munge/munged.pid").display()
                ))
                .arg(format!("--seed-file={}", d.join("munge/seed").display())),
        ));
        let started = Instant::now();
        while !socket.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "munged did not start\n{}",
                cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let conf = cluster.conf();
        cluster.daemons.push(spawn(
            Command::new("/usr/sbin/slurmctld")
                .arg("-D")
                .arg("-f")
                .arg(&conf),
        ));
        cluster.daemons.push(spawn(
            Command::new("/usr/sbin/slurmd")
                .args(["-D", "-N", "node1", "-f"])
                .arg(&conf),
        ));
        // The node registers, then is idle.
        let started = Instant::now();
        loop {
            let out = cluster
                .client("sinfo")
                .args(["-h", "-n", "node1", "-o", "%T"])
                .output()
                .unwrap();
            if stdout(&out).trim() == "idle" {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "node1 never became idle: {}\n{}",
                stdout(&out),
                cluster.logs()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        cluster
    }

    /// A Slurm client (`sbatch`, `srun`, `sinfo`) talking to this cluster.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.conf());
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

/// Prints the CUDA runtime's version as the loader's `libcudart.so.12`
/// reports it, the file the loader mapped, and what Slurm gave the job.
const TRAIN_PY: &str = "import ctypes, os
v = ctypes.c_int()
ctypes.CDLL('libcudart.so.12').cudaRuntimeGetVersion(ctypes.byref(v))
path = next(l.split()[-1] for l in open('/proc/self/maps') if 'libcudart.so.12' in l)
print('libcudart', v.value, path)
print('slurm job', os.environ['SLURM_JOB_ID'], 'gpus', os.environ.get('CUDA_VISIBLE_DEVICES'))
";

/// The job's environment: the submitting user's, as `sbatch` passes it on.
fn submitter(cluster: &Cluster, t: &TestEnv, program: &str, path: &str) -> Command {
    let mut c = cluster.client(program);
    c.env_remove("LD_LIBRARY_PATH")
        .env("HOME", &t.home)
        .env("CUDAENV_ROOT", &t.root)
        .env("NO_COLOR", "1")
        .env("PATH", path);
    c
}

fn check_run(out: &str, version_dir: &Path, what: &str) {
    let lib = version_dir.join("lib64/libcudart.so.12");
    let mut lines = out.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("libcudart 12040 ")
            && Path::new(first.rsplit(' ').next().unwrap())
                .canonicalize()
                .ok()
                == lib.canonicalize().ok(),
        "{what}: the stack's libcudart ({}) was not the one loaded:\n{out}",
        lib.display()
    );
    let second = lines.next().unwrap_or_default();
    assert!(
        second.starts_with("slurm job ") && second.ends_with(" gpus 0"),
        "{what}: not run as a Slurm job with one GPU:\n{out}"
    );
}

#[test]
fn the_documented_job_script_runs_under_a_real_slurm_and_srun_under_an_exported_modulefile() {
    let t = TestEnv::new();
    let version = fake_installed(&t.root, "12.4.1", "12.4.1", None);
    let project = t.home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".cuda-version"), "12.4.1\n").unwrap();
    std::fs::write(project.join("train.py"), TRAIN_PY).unwrap();
    let job = t.home.join("job.sh");
    std::fs::write(&job, crate::clusters::doc_block("script", "slurm")).unwrap();
    let bin_dir = crate::common::bin().parent().unwrap().to_owned();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir.display());

    let cluster = Cluster::start();

    // sbatch, from the project, as the docs say; `--wait` returns the job's exit code.
    let log = t.home.join("job.out");
    let out = submitter(&cluster, &t, "sbatch", &path)
        .current_dir(&project)
        .arg("--wait")
        .arg("-o")
        .arg(&log)
        .arg(&job)
        .output()
        .unwrap();
    let job_out = std::fs::read_to_string(&log).unwrap_or_default();
    assert_success(
        &out,
        &format!("sbatch job.sh\n{job_out}\n{}", cluster.logs()),
    );
    let (nvcc, rest) = job_out.split_once('\n').unwrap_or_default();
    assert_eq!(
        nvcc, "Cuda compilation tools, release 12.4, V12.4.131",
        "{job_out}"
    );
    check_run(rest, &version, "the batch job");

    // srun under the modulefile `cudaenv module export` wrote, loaded by Lmod.
    let mods = t.home.join("modulefiles");
    let out = t
        .cmd()
        .args(["module", "export", "--format", "lmod"])
        .arg(&mods)
        .output()
        .unwrap();
    assert_success(&out, "cudaenv module export");
    let script = format!(
        "source /usr/share/lmod/lmod/init/bash\nmodule use '{}'\nmodule load cuda/12.4.1\nsrun --gpus=1 python3 train.py\n",
        mods.display()
    );
    let out = submitter(&cluster, &t, "bash", &path)
        .current_dir(&project)
        .args(["--noprofile", "--norc", "-c", &script])
        .output()
        .unwrap();
    assert_success(
        &out,
        &format!("srun under the modulefile\n{}", cluster.logs()),
    );
    check_run(&stdout(&out), &version, "the srun step");
}
