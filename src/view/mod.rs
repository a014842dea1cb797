//! Views of a finished run, each derived from its trace: a Mermaid sequence diagram, an HTML
//! swimlane report, and the narrated explain mode.

pub mod cast;
pub mod explain;
pub mod mermaid;
pub mod report;
