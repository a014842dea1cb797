//! Nacos trace events and how the timeline words them.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NacosNote {}

impl NacosNote {
    pub fn is_routine(&self) -> bool {
        match *self {}
    }
}

impl fmt::Display for NacosNote {
    fn fmt(&self, _f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {}
    }
}
