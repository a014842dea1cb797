//! Nacos subjects: an instance's state on a server, a service's counts on a server, and what a
//! subscriber currently sees — each read off the world.
//!
//! Server subjects read the server's instance table itself (what the beat checks change), not the
//! query cache that `GET /instance/list` answers from, which lags by the 0.5 s push delay. A
//! server that is down has no instances.

use super::subject::Revision;
use super::Mismatch;
use crate::nacos::cluster::{DistroMapper, NodeState};
use crate::nacos::types::{ClientKey, Host, ServiceKey};
use crate::sim::world::World;
use smallvec::smallvec;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq)]
pub enum NacosSubject {
    /// One instance (by scenario name) in a state on a naming server: on the one listed, or on
    /// any of several (`servers = [...]`, for a claim about independent servers where which one
    /// is the draw of the seed).
    Instance { servers: Vec<String>, instance: String, state: InstanceState },
    /// How many instances of a service a server holds, and how many are healthy.
    Service { server: String, service: ServiceKey, healthy: Option<usize>, total: Option<usize> },
    /// A subscriber's cached list: every instance (`getAllInstances`) and the healthy ones
    /// (`selectInstances(healthy = true)`), by scenario name.
    Subscriber {
        subscriber: String,
        service: ServiceKey,
        instances: Option<BTreeSet<String>>,
        healthy: Option<BTreeSet<String>>,
    },
    /// `peer`'s state in `server`'s own membership view (`ServerMemberManager`): each member
    /// decides for itself, so two servers may disagree about the same peer.
    Member { server: String, peer: String, state: NodeState },
    /// The member `server`'s `DistroMapper#mapSrv` names for a 1.x instance's `ip:port`: who,
    /// in `server`'s own view, runs its beat checks and takes its forwarded beats.
    Responsible { server: String, instance: String, member: String },
    /// The server a 2.x client is RUNNING on (`None`: no usable connection — before its first
    /// connect, or while it reconnects).
    Connection { client: String, server: Option<String> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceState {
    Healthy,
    Unhealthy,
    Absent,
    Present,
}

impl InstanceState {
    pub fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "healthy" => InstanceState::Healthy,
            "unhealthy" => InstanceState::Unhealthy,
            "absent" => InstanceState::Absent,
            "present" => InstanceState::Present,
            _ => return None,
        })
    }

    pub fn word(self) -> &'static str {
        match self {
            InstanceState::Healthy => "healthy",
            InstanceState::Unhealthy => "unhealthy",
            InstanceState::Absent => "absent",
            InstanceState::Present => "present",
        }
    }
}

fn list(names: &BTreeSet<String>) -> String {
    let v: Vec<&str> = names.iter().map(String::as_str).collect();
    format!("[{}]", v.join(", "))
}

impl NacosSubject {
    pub fn check(&self, world: &World) -> Result<(), Mismatch> {
        match self {
            NacosSubject::Instance { servers, instance, state } => {
                let facts = world.nacos_instance(instance).expect("validated instance name");
                let mut got = Vec::new();
                for server in servers {
                    let is = world
                        .nacos_server(server)
                        .and_then(|s| s.borrow().instance(&facts.service, &facts.client()).map(|p| p.healthy));
                    let word = match is {
                        Some(true) => InstanceState::Healthy,
                        Some(false) => InstanceState::Unhealthy,
                        None => InstanceState::Absent,
                    };
                    if word == *state || (*state == InstanceState::Present && is.is_some()) {
                        return Ok(());
                    }
                    got.push((server, word.word(), world.nacos_server(server).is_some()));
                }
                Err(match got.as_slice() {
                    [(server, word, running)] => Mismatch {
                        expected: format!("{instance} on {server}: {}", state.word()),
                        got: if *running { word.to_string() } else { format!("{word} ({server} is not running)") },
                    },
                    _ => Mismatch {
                        expected: format!("{instance} on any of {}: {}", servers.join(", "), state.word()),
                        got: got
                            .iter()
                            .map(|(s, w, running)| {
                                format!("{w} on {s}{}", if *running { "" } else { " (not running)" })
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    },
                })
            }
            NacosSubject::Service { server, service, healthy, total } => {
                let (h, t) = world.nacos_server(server).map_or((0, 0), |s| s.borrow().counts(service));
                if healthy.is_none_or(|x| x == h) && total.is_none_or(|x| x == t) {
                    return Ok(());
                }
                let mut want = Vec::new();
                if let Some(x) = healthy {
                    want.push(format!("{x} healthy"));
                }
                if let Some(x) = total {
                    want.push(format!("{x} in total"));
                }
                Err(Mismatch {
                    expected: format!("{service} on {server}: {}", want.join(", ")),
                    got: format!("{h} healthy, {t} in total"),
                })
            }
            NacosSubject::Subscriber { subscriber, service, instances, healthy } => {
                let Some(core) = world.nacos_subscriber(subscriber) else {
                    return Err(Mismatch {
                        expected: self.describe_view(),
                        got: format!("{subscriber} is not running"),
                    });
                };
                let core = core.borrow();
                let names = |hosts: &mut dyn Iterator<Item = &Host>| -> BTreeSet<String> {
                    hosts.map(|h| name(world, service, h)).collect()
                };
                let all = names(&mut core.all_instances(service).iter());
                let up = names(&mut core.select_instances(service, true));
                if instances.as_ref().is_none_or(|x| *x == all) && healthy.as_ref().is_none_or(|x| *x == up) {
                    return Ok(());
                }
                Err(Mismatch {
                    expected: self.describe_view(),
                    got: format!("instances {}, healthy {}", list(&all), list(&up)),
                })
            }
            NacosSubject::Connection { client, server } => {
                let word = |s: Option<&str>| s.map_or("no server".to_string(), str::to_string);
                let expected = format!("{client} connected to {}", word(server.as_deref()));
                let Some(view) = world.grpc_client(client) else {
                    if server.is_none() {
                        return Ok(());
                    }
                    return Err(Mismatch { expected, got: format!("{client} is not running") });
                };
                let got = view.borrow().server().map(|s| s.to_string());
                if got == *server {
                    return Ok(());
                }
                Err(Mismatch { expected, got: format!("connected to {}", word(got.as_deref())) })
            }
            NacosSubject::Responsible { server, instance, member } => {
                let expected = format!("{server} maps {instance} to {member}");
                let Some(view) = world.nacos_members(server) else {
                    return Err(Mismatch { expected, got: format!("{server} is not running") });
                };
                let facts = world.nacos_instance(instance).expect("validated instance name");
                let tag = facts.client().responsible_tag();
                let mapper = DistroMapper::from_view(&view.borrow());
                let got = mapper.map_srv(&tag);
                if **got == **member {
                    return Ok(());
                }
                let list: Vec<&str> = mapper.healthy_list().iter().map(|m| &**m).collect();
                Err(Mismatch { expected, got: format!("{got} (healthy list [{}])", list.join(", ")) })
            }
            NacosSubject::Member { server, peer, state } => {
                let expected = format!("{server} sees {peer} {state}");
                let Some(view) = world.nacos_members(server) else {
                    return Err(Mismatch { expected, got: format!("{server} is not running") });
                };
                let p = view.borrow().peer(peer).expect("validated: a member of the same cluster");
                if p.state == *state {
                    return Ok(());
                }
                Err(Mismatch { expected, got: format!("{} (failAccessCnt {})", p.state, p.fail_access_cnt) })
            }
        }
    }

    fn describe_view(&self) -> String {
        let NacosSubject::Subscriber { subscriber, service, instances, healthy } = self else { return String::new() };
        let mut parts = vec![format!("{subscriber} sees {service}")];
        if let Some(x) = instances {
            parts.push(format!("instances {}", list(x)));
        }
        if let Some(x) = healthy {
            parts.push(format!("healthy {}", list(x)));
        }
        parts.join(": ")
    }

    /// Changes whenever the answer of `check` could change.
    pub fn revision(&self, world: &World) -> Revision {
        match self {
            NacosSubject::Instance { servers, .. } => servers.iter().map(|s| world.nacos_server_revision(s)).collect(),
            NacosSubject::Service { server, .. } => smallvec![world.nacos_server_revision(server)],
            NacosSubject::Subscriber { subscriber, .. } => smallvec![world.nacos_subscriber_revision(subscriber)],
            NacosSubject::Member { server, .. } | NacosSubject::Responsible { server, .. } => {
                smallvec![world.nacos_members_revision(server)]
            }
            NacosSubject::Connection { client, .. } => smallvec![world.grpc_client_revision(client)],
        }
    }
}

/// A cached host by its scenario name, or `ip:port` if no instance of that service has it.
fn name(world: &World, service: &ServiceKey, h: &Host) -> String {
    let key = ClientKey::new(&h.ip, h.port);
    world.nacos_instance_name(service, &key).map_or_else(|| format!("{}:{}", h.ip, h.port), str::to_string)
}
