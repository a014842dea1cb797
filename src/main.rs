//! The `routesim` command. Everything lives in the library; see `routesim::cli`.

fn main() -> std::process::ExitCode {
    routesim::cli::main()
}
