//! routesim: an actor-model simulator of route expiry in RocketMQ name servers and Nacos.
pub mod rocketmq;
pub mod sim;
