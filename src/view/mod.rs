//! Views of a finished run, each derived from its trace: a Mermaid sequence diagram, an HTML
//! swimlane report, the narrated explain mode, and the lesson pages that put them together for
//! each catalogue scenario.

pub mod cast;
pub mod explain;
pub mod lesson;
pub mod mermaid;
pub mod report;
