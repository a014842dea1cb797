//! What a narrated run hands back: its key moments. The run machinery only carries a
//! [`Narrator`] and returns what it wrote; which events make a moment, and how they read, is a
//! view's business (`view::explain`), passed in by whoever wants the narration.

use crate::sim::clock::SimTime;
use crate::sim::trace::TraceEvent;
use crate::sim::world::World;

/// One key moment.
pub struct Moment {
    pub t: SimTime,
    pub actor: String,
    /// What happened, in the code's own terms.
    pub story: Vec<String>,
    /// Per registry whose tables this moment changed: the rows of the affected tables before
    /// and after.
    pub changes: Vec<TableChange>,
}

pub struct TableChange {
    /// The name server or naming server.
    pub server: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// Sees every event with the world as it stands after it, and keeps the moments worth telling.
pub trait Narrator {
    fn on_event(&mut self, event: &TraceEvent, world: &World);
    /// The moments so far, in time order; the narrator keeps none of them.
    fn take_moments(&mut self) -> Vec<Moment>;
}
