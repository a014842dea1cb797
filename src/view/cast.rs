//! Who is who in a run, for views: the order of the lanes, and the scenario names behind the
//! identities Nacos puts in the trace (`DEFAULT_GROUP@@orders 10.1.0.1:8080#true` is `orders-1`
//! of the `shop` process; `10.255.0.1:54951#true` is the `gateway` subscriber).
//!
//! The trace speaks Nacos's language on purpose — it is what the server logs — so the mapping
//! back to the scenario lives here, beside the views that need it, and not in the model.

use crate::nacos::types::{ClientKey, ServiceKey, DEFAULT_GROUP, DEFAULT_NAMESPACE};
use crate::sim::name::Name;
use crate::sim::scenario::Scenario;
use std::collections::BTreeMap;

/// The scenario's processes and Nacos identities.
#[derive(Clone, Debug, Default)]
pub struct Cast {
    /// Process names in lane order (`Scenario::process_names`).
    pub order: Vec<String>,
    /// `(service, client)` → (instance name, its app process).
    instances: BTreeMap<(ServiceKey, ClientKey), (String, String)>,
    /// A subscriber's UDP client (`ip:udp_port`) → its name.
    subscribers: BTreeMap<ClientKey, String>,
    /// A RocketMQ broker's address (`10.0.0.1:10911`) → its process.
    brokers: BTreeMap<String, String>,
}

impl Cast {
    pub fn of(s: &Scenario) -> Self {
        let mut instances = BTreeMap::new();
        for app in &s.nacos.apps {
            for i in &app.instances {
                let key = (i.service.clone(), ClientKey::new(&i.instance.ip, i.instance.port));
                instances.insert(key, (i.name.clone(), app.name.clone()));
            }
        }
        let subscribers = s
            .nacos
            .subscribers
            .iter()
            .map(|x| (ClientKey::new(&Name::from(x.ip.as_str()), x.udp_port), x.name.clone()));
        let brokers = s.brokers.iter().map(|b| (b.config.addr.clone(), b.name.clone())).collect();
        Cast { order: s.process_names(), instances, subscribers: subscribers.collect(), brokers }
    }

    /// The instance's scenario name, or `ip:port` for one the scenario does not declare.
    pub fn instance(&self, service: &ServiceKey, client: &ClientKey) -> String {
        self.instances.get(&(service.clone(), client.clone())).map_or_else(|| client_text(client), |(n, _)| n.clone())
    }

    /// The process that publishes the instance: where its beats come from.
    pub fn app(&self, service: &ServiceKey, client: &ClientKey) -> String {
        self.instances.get(&(service.clone(), client.clone())).map_or_else(|| client_text(client), |(_, a)| a.clone())
    }

    /// Every instance of the scenario as (service, client, instance name).
    pub fn instances(&self) -> impl Iterator<Item = (&ServiceKey, &ClientKey, &str)> {
        self.instances.iter().map(|((s, c), (n, _))| (s, c, n.as_str()))
    }

    /// The broker process at `addr`, if the scenario has one there.
    pub fn broker(&self, addr: &str) -> Option<&str> {
        self.brokers.get(addr).map(String::as_str)
    }

    /// The subscriber behind a UDP client id, or `ip:port`.
    pub fn subscriber(&self, client: &ClientKey) -> String {
        self.subscribers.get(client).cloned().unwrap_or_else(|| client_text(client))
    }
}

/// `10.1.0.1:8080`: a client id without Nacos's `#true` suffix (ephemeral, which all are here).
pub fn client_text(c: &ClientKey) -> String {
    format!("{}:{}", c.ip, c.port)
}

/// `orders` for `DEFAULT_GROUP@@orders` in `public`; the full key otherwise.
pub fn service_text(s: &ServiceKey) -> String {
    let prefix = format!("{DEFAULT_GROUP}@@");
    match s.grouped.strip_prefix(&prefix) {
        Some(name) if &*s.namespace == DEFAULT_NAMESPACE => name.to_string(),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn services_in_the_default_group_print_by_their_bare_name() {
        assert_eq!(service_text(&ServiceKey::new("public", "DEFAULT_GROUP", "orders")), "orders");
        assert_eq!(service_text(&ServiceKey::new("public", "G", "orders")), "G@@orders");
        assert_eq!(service_text(&ServiceKey::new("dev", "DEFAULT_GROUP", "orders")), "dev/DEFAULT_GROUP@@orders");
    }

    #[test]
    fn unknown_identities_fall_back_to_ip_and_port() {
        let cast = Cast::default();
        let client = ClientKey::new(&Name::from("10.9.9.9"), 80);
        assert_eq!(cast.instance(&ServiceKey::new("public", "DEFAULT_GROUP", "x"), &client), "10.9.9.9:80");
        assert_eq!(cast.subscriber(&client), "10.9.9.9:80");
    }
}
