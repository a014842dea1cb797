//! The `routesim` command. Everything lives in the library; see `routesim::cli`.

// mimalloc, called the cheap way (`routesim::allocator`).
#[global_allocator]
static ALLOCATOR: routesim::allocator::Allocator = routesim::allocator::Allocator;

fn main() -> std::process::ExitCode {
    routesim::cli::main()
}
