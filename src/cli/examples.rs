//! An example for every subcommand's `--help` (and man page), in one table.
//!
//! They are added to the clap definition when it is built for parsing, for
//! `cudaenv help COMMAND` and for `cudaenv man`, so each command's help ends
//! with what to type. A command that sets its own `after_help` keeps it. The
//! test below fails for a visible subcommand without an example: add a row.

use clap::CommandFactory;

/// `(subcommand, examples)`: one command per line, with what it does.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "versions",
        "cudaenv versions                # the installed versions, `*` on the active one\n\
         cudaenv versions --bare         # names only, for scripts\n\
         cudaenv versions --check        # compare each version's files with their record",
    ),
    (
        "version",
        "cudaenv version                 # 12.4.1+cudnn9.1.0.70 (set by /…/project/.cuda-version)\n\
         cudaenv version --bare          # the name only",
    ),
    (
        "local",
        "cudaenv local 12.4              # pin the newest installed 12.4 here (.cuda-version)\n\
         cudaenv local 11.2+cudnn8.1     # pin CUDA and cuDNN\n\
         cudaenv local --for torch==2.4  # pin what a framework release needs\n\
         cudaenv local                   # print the pin that applies here",
    ),
    (
        "global",
        "cudaenv global 12.4             # the version used where no project pins one\n\
         cudaenv global --unset          # back to `system`",
    ),
    (
        "shell",
        "cudaenv shell 11.8              # this shell only (needs `cudaenv init` in the rc file)\n\
         cudaenv shell --unset           # back to the project's or global version",
    ),
    (
        "prefix",
        "cudaenv prefix                  # the active version's directory\n\
         ls \"$(cudaenv prefix 12.4)/lib64\"",
    ),
    (
        "root",
        "cd \"$(cudaenv root)\"            # where versions, shims and the cache live",
    ),
    (
        "exec",
        "cudaenv exec -- nvcc --version\n\
         cudaenv exec --version 11.8 -- python train.py",
    ),
    (
        "env",
        "eval \"$(cudaenv env --shell bash 12.4)\"   # activate 12.4 in this shell by hand\n\
         cudaenv env --shell fish | source",
    ),
    (
        "init",
        "eval \"$(cudaenv init bash)\"       # in ~/.bashrc\n\
         cudaenv init fish | source       # in ~/.config/fish/config.fish\n\
         cudaenv init                     # explain the set-up for your shell",
    ),
    (
        "rehash",
        "cudaenv rehash                  # after changing a version's bin directory by hand",
    ),
    (
        "link",
        "cudaenv link cuda-sys /usr/local/cuda-12.4\n\
         cudaenv link torch-env ~/venvs/torch/lib/python3.11/site-packages/nvidia",
    ),
    (
        "uninstall",
        "cudaenv uninstall 12.4.1+cudnn9.1.0.70\n\
         cudaenv uninstall cuda-sys -y     # a link: forgets it, leaves the tree alone",
    ),
    (
        "which",
        "cudaenv which nvcc              # /…/versions/12.4.1/bin/nvcc",
    ),
    (
        "install",
        "cudaenv install 12.4+cudnn9     # CUDA 12.4 with cuDNN 9, from PyPI or NVIDIA\n\
         cudaenv install 11.2+cudnn8.1 --profile devel   # with nvcc and headers\n\
         cudaenv install --for tensorflow==2.10\n\
         cudaenv install 12.4 --dry-run  # what would be downloaded, from where",
    ),
    (
        "ls-remote",
        "cudaenv ls-remote 12            # every CUDA 12 release and who serves it\n\
         cudaenv ls-remote --json",
    ),
    (
        "cache",
        "cudaenv cache dir               # where downloads are kept\n\
         cudaenv cache clean             # delete them (installed versions keep their files)",
    ),
    (
        "update",
        "cudaenv update                  # NVIDIA's newest redist manifests\n\
         CUDAENV_NVIDIA_MIRROR=https://mirror.example/nvidia cudaenv update --trust-mirror",
    ),
    (
        "doctor",
        "cudaenv doctor                  # driver, GPUs, the active version, library paths\n\
         cudaenv doctor --json > facts.json",
    ),
    (
        "compat",
        "cudaenv compat tensorflow==2.10 # CUDA 11.2, cuDNN 8.1, Python, minimum driver\n\
         cudaenv compat torch            # for the torch installed in this Python environment",
    ),
    (
        "explain",
        "cudaenv explain \"Could not load dynamic library 'libcudart.so.11.0'\"\n\
         python train.py 2>&1 | cudaenv explain",
    ),
    (
        "verify",
        "cudaenv verify                  # the active version, on the GPU\n\
         cudaenv verify 12.4 --dtype fp16,bf16 --device all\n\
         cudaenv verify --json",
    ),
    (
        "direnv",
        "mkdir -p ~/.config/direnv/lib && cudaenv direnv > ~/.config/direnv/lib/cudaenv.sh   # once\n\
         echo 'use cudaenv' >> .envrc && direnv allow   # per project (or `use cudaenv 12.4`)",
    ),
    (
        "module",
        "cudaenv module export --format lmod /opt/modulefiles   # then: module use /opt/modulefiles\n\
         cudaenv module export --format tcl 12.4 ~/modulefiles",
    ),
    (
        "mirror",
        "cudaenv mirror /srv/cuda-mirror 12.4+cudnn9 11.8   # on a machine with network\n\
         CUDAENV_PYPI_INDEX=file:///srv/cuda-mirror/pypi/simple cudaenv install 12.4+cudnn9",
    ),
    (
        "trace",
        "cudaenv trace -- python -c 'import torch; torch.zeros(1).cuda()'\n\
         cudaenv trace --version 12.4 --json -- ./my_program > libs.json",
    ),
    (
        "lock",
        "cudaenv lock                    # resolve .cuda-version's stack to exact files: cuda.lock\n\
         cudaenv lock --platform linux-x86_64,linux-aarch64\n\
         cudaenv lock --check            # exit 25 when cuda.lock is out of date",
    ),
    (
        "export",
        "cudaenv export pip-constraints > constraints.txt && pip install torch -c constraints.txt\n\
         cudaenv export uv               # [tool.uv] constraint-dependencies for pyproject.toml",
    ),
];

/// The command-line definition with every subcommand's examples.
pub fn command() -> clap::Command {
    let mut cmd = super::Cli::command();
    for (name, examples) in EXAMPLES {
        if cmd.find_subcommand(name).is_none() {
            continue;
        }
        cmd = cmd.mut_subcommand(name, |sub| {
            if sub.get_after_help().is_some() {
                return sub;
            }
            let text: String = examples
                .lines()
                .map(|l| format!("  {}\n", l.trim_start()))
                .collect();
            sub.after_help(format!("Examples:\n{}", text.trim_end()))
        });
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_subcommand_has_an_example() {
        let cmd = command();
        cmd.clone().debug_assert();
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let after = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            assert!(
                after.starts_with("Examples:\n") && after.contains("cudaenv"),
                "`cudaenv {}` has no example: add a row to EXAMPLES in src/cli/examples.rs",
                sub.get_name()
            );
        }
    }
}
