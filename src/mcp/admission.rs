//! Which MCP requests over HTTP are let in, and knowing when none is left in flight.
//!
//! Each POST that carries a request (not a notification, and not the long-lived
//! `subscriptions/listen`) takes a [`Ticket`] for its client until its response has been
//! sent. A client may hold at most `max_in_flight_per_client` tickets; graceful shutdown
//! waits until no ticket is left.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// Who a request is from, for the per-client limits (requests in flight, sessions,
/// streams): what the client cannot forge. Set by the authentication layer to the
/// caller's pseudonym (an OAuth caller's or a static token's); else the peer address
/// ([`ClientId::of_address`]). A session id is not it: a client holding many sessions is
/// still one client.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientId(pub String);

impl ClientId {
    /// The client at `address`: an IPv4 address, or the /64 network of an IPv6 one (one
    /// host usually holds a whole /64, and could otherwise be a new client per address).
    pub fn of_address(address: std::net::IpAddr) -> ClientId {
        // The last address seen on this thread: a connection's requests come from one
        // address, and formatting it costs more than comparing it.
        thread_local! {
            static LAST: std::cell::RefCell<Option<(std::net::IpAddr, String)>> =
                const { std::cell::RefCell::new(None) };
        }
        let cached = LAST.try_with(|last| {
            let mut last = last.try_borrow_mut().ok()?;
            if let Some((seen, id)) = &*last
                && *seen == address
            {
                return Some(ClientId(id.clone()));
            }
            let id = ClientId::format(address);
            *last = Some((address, id.0.clone()));
            Some(id)
        });
        cached
            .ok()
            .flatten()
            .unwrap_or_else(|| ClientId::format(address))
    }

    fn format(address: std::net::IpAddr) -> ClientId {
        match address {
            std::net::IpAddr::V6(v6) if v6.to_ipv4_mapped().is_none() && !v6.is_loopback() => {
                let segments = v6.segments();
                ClientId(format!(
                    "address:{:x}:{:x}:{:x}:{:x}::/64",
                    segments[0], segments[1], segments[2], segments[3]
                ))
            }
            std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientId(format!("address:{v4}")),
                None => ClientId(format!("address:{v6}")),
            },
            std::net::IpAddr::V4(v4) => ClientId(format!("address:{v4}")),
        }
    }
}

/// The tickets in use, per client and in all.
pub struct Admission {
    limit: usize,
    held: Mutex<Held>,
    idle: Notify,
}

#[derive(Default)]
struct Held {
    total: usize,
    by_client: HashMap<ClientId, usize>,
}

/// Held while one request is served; returned when dropped.
pub struct Ticket {
    admission: Arc<Admission>,
    /// The client it counts against; `None` without a per-client limit, where only the
    /// total is kept.
    client: Option<ClientId>,
}

impl Admission {
    /// `limit` tickets per client; 0 = no limit.
    pub fn new(limit: usize) -> Arc<Admission> {
        Arc::new(Admission {
            limit,
            held: Mutex::default(),
            idle: Notify::new(),
        })
    }

    /// A ticket for `client`, or `None` when it already holds `limit`.
    pub fn admit(self: &Arc<Self>, client: ClientId) -> Option<Ticket> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.total += 1;
        if self.limit == 0 {
            // No per-client limit: nothing to count per client.
            return Some(Ticket {
                admission: self.clone(),
                client: None,
            });
        }
        let count = held.by_client.entry(client.clone()).or_default();
        if *count >= self.limit {
            held.total -= 1;
            return None;
        }
        *count += 1;
        Some(Ticket {
            admission: self.clone(),
            client: Some(client),
        })
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.held.lock().unwrap_or_else(|p| p.into_inner()).total
    }

    /// Waits until no request is in flight, or `deadline` passed; true when idle.
    pub async fn wait_idle(&self, deadline: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.idle.notified();
                if self.in_flight() == 0 {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(deadline, wait).await.is_ok()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut held = self
            .admission
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(client) = &self.client
            && let Some(count) = held.by_client.get_mut(client)
        {
            *count -= 1;
            if *count == 0 {
                held.by_client.remove(client);
            }
        }
        held.total = held.total.saturating_sub(1);
        if held.total == 0 {
            self.admission.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn each_client_has_its_own_limit_and_idle_is_noticed() {
        let admission = Admission::new(2);
        let a = ClientId("a".into());
        let b = ClientId("b".into());
        let first = admission.admit(a.clone()).expect("1st");
        let second = admission.admit(a.clone()).expect("2nd");
        assert!(admission.admit(a.clone()).is_none(), "a third for a");
        let other = admission.admit(b.clone()).expect("b has its own");
        assert_eq!(admission.in_flight(), 3);
        drop(first);
        let again = admission.admit(a).expect("a slot was freed");
        assert!(!admission.wait_idle(Duration::from_millis(20)).await);
        let waiter = {
            let admission = admission.clone();
            tokio::spawn(async move { admission.wait_idle(Duration::from_secs(5)).await })
        };
        drop((second, other, again));
        assert!(waiter.await.expect("joined"));
        assert_eq!(admission.in_flight(), 0);
    }

    #[test]
    fn an_address_names_a_client_and_an_ipv6_host_is_its_64() {
        let of = |text: &str| ClientId::of_address(text.parse().expect("address"));
        assert_eq!(of("192.0.2.7").0, "address:192.0.2.7");
        assert_eq!(of("::ffff:192.0.2.7"), of("192.0.2.7"));
        assert_eq!(of("2001:db8:1:2::1"), of("2001:db8:1:2:ffff::9"));
        assert_ne!(of("2001:db8:1:2::1"), of("2001:db8:1:3::1"));
        assert_eq!(of("::1").0, "address:::1");
    }

    #[test]
    fn zero_means_no_limit() {
        let admission = Admission::new(0);
        let tickets: Vec<Ticket> = (0..1000)
            .filter_map(|_| admission.admit(ClientId("x".into())))
            .collect();
        assert_eq!(tickets.len(), 1000);
    }
}
