//! The `routesim` command. Everything lives in the library; see `routesim::cli`.

// A simulation allocates and frees millions of small messages; mimalloc does that several
// times faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    routesim::cli::main()
}
