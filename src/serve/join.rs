//! What students type to join: the `ssh` line, or the page's address, with an address they can
//! reach. A server that
//! listens on every address (0.0.0.0 or ::) names this machine's own addresses, which a
//! teacher would otherwise have to look up.

use std::net::{IpAddr, SocketAddr};

/// Addresses shown at the most: a machine with many interfaces lists its first few.
const MOST: usize = 4;

/// The join lines for a server listening on `listening`, given this machine's addresses.
pub(crate) fn join_lines(listening: SocketAddr, machine: &[IpAddr]) -> Vec<String> {
    let port = listening.port();
    lines(listening, machine, |host| {
        format!("ssh -p {port} NAME@{host}")
    })
}

/// The addresses browser students open, for a page served on `listening`.
pub(crate) fn web_lines(listening: SocketAddr, machine: &[IpAddr], tls: bool) -> Vec<String> {
    let port = listening.port();
    let scheme = if tls { "https" } else { "http" };
    lines(listening, machine, |host| {
        format!("{scheme}://{host}:{port}/")
    })
}

/// One line per address students can reach the server at.
fn lines(
    listening: SocketAddr,
    machine: &[IpAddr],
    line: impl Fn(String) -> String,
) -> Vec<String> {
    let ip = listening.ip();
    if !ip.is_unspecified() {
        return vec![line(host(ip))];
    }
    let reachable: Vec<String> = machine
        .iter()
        .filter(|address| !address.is_loopback() && !is_link_local(address))
        // 0.0.0.0 takes IPv4 only; :: takes both.
        .filter(|address| ip.is_ipv6() || address.is_ipv4())
        .take(MOST)
        .map(|address| line(host(*address)))
        .collect();
    if reachable.is_empty() {
        vec![line("THIS-MACHINE".to_string())]
    } else {
        reachable
    }
}

/// This machine's addresses, or none when they cannot be read.
pub(crate) fn machine_addresses() -> Vec<IpAddr> {
    if_addrs::get_if_addrs()
        .map(|interfaces| interfaces.iter().map(|interface| interface.ip()).collect())
        .unwrap_or_default()
}

fn host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    }
}

fn is_link_local(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|ip| ip.parse().unwrap()).collect()
    }

    #[test]
    fn every_address_names_this_machines_reachable_addresses() {
        let machine = ips(&[
            "127.0.0.1",
            "192.168.1.20",
            "169.254.3.4",
            "10.0.0.5",
            "fe80::1",
            "2001:db8::7",
        ]);
        assert_eq!(
            join_lines("0.0.0.0:2222".parse().unwrap(), &machine),
            ["ssh -p 2222 NAME@192.168.1.20", "ssh -p 2222 NAME@10.0.0.5"]
        );
        assert_eq!(
            join_lines("[::]:2222".parse().unwrap(), &machine),
            [
                "ssh -p 2222 NAME@192.168.1.20",
                "ssh -p 2222 NAME@10.0.0.5",
                "ssh -p 2222 NAME@[2001:db8::7]"
            ]
        );
    }

    #[test]
    fn a_machine_with_no_reachable_address_says_so_in_words() {
        assert_eq!(
            join_lines("0.0.0.0:22".parse().unwrap(), &ips(&["127.0.0.1"])),
            ["ssh -p 22 NAME@THIS-MACHINE"]
        );
    }

    #[test]
    fn browsers_are_given_the_pages_address() {
        let machine = ips(&["127.0.0.1", "192.168.1.20"]);
        assert_eq!(
            web_lines("0.0.0.0:8080".parse().unwrap(), &machine, false),
            ["http://192.168.1.20:8080/"]
        );
        assert_eq!(
            web_lines("[::1]:8443".parse().unwrap(), &machine, true),
            ["https://[::1]:8443/"]
        );
    }

    #[test]
    fn one_address_is_that_address() {
        assert_eq!(
            join_lines("127.0.0.1:2222".parse().unwrap(), &ips(&["192.168.1.20"])),
            ["ssh -p 2222 NAME@127.0.0.1"]
        );
    }
}
