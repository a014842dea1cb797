//! A timer's action, kept in the timer's agenda entry.
//!
//! Every timer an actor sets (a broker's next registration, a Nacos client's next beat) is a
//! closure that sends the actor a message: an address and the message, two or three words.
//! Boxed, each timer cost an allocation when it was set and a free when it fired, and the box was
//! one more cache line to fetch at the firing, 30 s later for a broker's registration
//! (docs/speed-history.md, "A timer's action in its entry"). A closure of up to four words now
//! lives in the entry itself; a larger one is boxed, and the box is what the entry holds.

use std::marker::PhantomData;
use std::mem::{align_of, size_of, ManuallyDrop, MaybeUninit};

/// Room for a closure: four words, word-aligned.
type Slot = MaybeUninit<[usize; 4]>;

/// A closure to run once, held in place when it fits (see the module docs).
pub(super) struct Fire {
    slot: Slot,
    /// Runs the closure in `slot`, which it moves out.
    run: unsafe fn(*mut Slot),
    /// Drops the closure in `slot` without running it.
    drop: unsafe fn(*mut Slot),
    /// Not `Send` nor `Sync`, whatever the closure holds: the `Box<dyn FnOnce()>` this replaces
    /// was neither, and a closure here may hold an `Rc`.
    _here: PhantomData<*const ()>,
}

impl Fire {
    pub(super) fn new<F: FnOnce() + 'static>(f: F) -> Fire {
        if fits::<F>() {
            Fire::in_slot(f)
        } else {
            let boxed: Box<dyn FnOnce()> = Box::new(f);
            Fire::in_slot(boxed)
        }
    }

    fn in_slot<F: FnOnce() + 'static>(f: F) -> Fire {
        assert!(fits::<F>(), "only a closure that fits the slot is kept in it");
        let mut slot = Slot::uninit();
        // SAFETY: `F` fits the slot in size and alignment (just checked), and the slot is
        // uninitialised, so writing overwrites nothing that needed a drop.
        unsafe { slot.as_mut_ptr().cast::<F>().write(f) };
        Fire { slot, run: run::<F>, drop: drop_in_place::<F>, _here: PhantomData }
    }

    /// Runs the closure.
    pub(super) fn call(self) {
        let mut me = ManuallyDrop::new(self);
        // SAFETY: the slot holds the `F` that `in_slot` wrote, with `run` made for that `F`. It
        // moves it out once, and `me` is never dropped, so the `F` is not dropped a second time
        // (not even if the closure panics: it was moved out before it ran).
        unsafe { (me.run)(&mut me.slot) }
    }
}

impl Drop for Fire {
    /// A timer that never ran (cancelled, or its process died): its closure is dropped.
    fn drop(&mut self) {
        // SAFETY: the slot still holds its `F` (`call` forgets the `Fire` it consumes), and
        // `drop` was made for that `F`.
        unsafe { (self.drop)(&mut self.slot) }
    }
}

const fn fits<F>() -> bool {
    size_of::<F>() <= size_of::<Slot>() && align_of::<F>() <= align_of::<Slot>()
}

/// # Safety
/// `slot` holds an initialised `F`, which this moves out: the caller must not use it again.
unsafe fn run<F: FnOnce()>(slot: *mut Slot) {
    let f = slot.cast::<F>().read();
    f()
}

/// # Safety
/// `slot` holds an initialised `F`, which this drops: the caller must not use it again.
unsafe fn drop_in_place<F>(slot: *mut Slot) {
    slot.cast::<F>().drop_in_place()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    /// The closures' captures are counted by an `Rc`: each is dropped exactly once, whether the
    /// closure ran or not, in the slot or boxed.
    #[test]
    fn a_closure_runs_once_and_its_captures_are_dropped_once_run_or_not() {
        let ran = Rc::new(Cell::new(0));
        let small = {
            let ran = ran.clone();
            move || ran.set(ran.get() + 1)
        };
        let big = {
            let (ran, ballast) = (ran.clone(), [7u64; 8]);
            move || ran.set(ran.get() + ballast.iter().sum::<u64>() as i32)
        };
        assert!(fits::<Rc<Cell<i32>>>() && !fits::<[u64; 8]>(), "one in the slot, one boxed");
        Fire::new(small).call();
        Fire::new(big).call();
        assert_eq!(ran.get(), 1 + 56);
        assert_eq!(Rc::strong_count(&ran), 1, "run closures dropped their captures");

        let (never_small, never_big) = (ran.clone(), (ran.clone(), [0u64; 8]));
        drop(Fire::new(move || drop(never_small)));
        drop(Fire::new(move || drop(never_big)));
        assert_eq!(ran.get(), 57, "nothing ran");
        assert_eq!(Rc::strong_count(&ran), 1, "unrun closures dropped their captures");
    }
}
