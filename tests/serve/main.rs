//! The classroom's tests, one binary: `attn-tutor serve` run as a process on 127.0.0.1, with
//! real OpenSSH clients and headless Chromium as students, and the floods an attacker would try.

#[path = "../common/mod.rs"]
mod common;

mod serve_browser;
mod serve_follow;
mod serve_heads;
mod serve_hostile;
mod serve_polls;
mod serve_robustness;
mod serve_ssh;
mod serve_web;
