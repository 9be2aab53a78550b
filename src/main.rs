fn main() -> std::process::ExitCode {
    cudaenv::cli::main()
}
