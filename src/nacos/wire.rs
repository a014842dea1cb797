//! The Nacos naming HTTP calls the model exchanges.

#[derive(Debug)]
pub enum NacosMsg {}

impl NacosMsg {
    pub fn kind(&self) -> &'static str {
        match *self {}
    }
}
