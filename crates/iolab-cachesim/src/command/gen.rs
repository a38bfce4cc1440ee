//! `iolab cachesim gen`: a seeded Zipf trace written as libCacheSim's oracleGeneral, for
//! simulations and for comparing with other simulators on the same requests.
//!
//! Exit codes: 0 written; 2 bad option; 1 writing failed. A failed run leaves no file.

use std::path::PathBuf;

use clap::{Arg, ArgMatches, Command};
use iolab_kind::cli::{CommandError, Host};
use iolab_kind::output::thousands;

use crate::synth::{write_oracle_file, SynthError, WriteError, ZipfSpec};

/// `iolab cachesim gen`'s definition.
pub fn command() -> Command {
    Command::new("gen")
        .about("Write a seeded Zipf request trace as libCacheSim's oracleGeneral")
        .after_help("Examples:\n  iolab cachesim gen --zipf 1.0 --objects 1M --requests 20M -o zipf1.oracleGeneral.bin\n  iolab cachesim gen --zipf 0.8 --objects 10M --requests 20M --seed 7 -o z08.oracleGeneral.bin\n\nObject k (1 = the most popular) is requested with probability ∝ k^-α (α = 0: uniform);\ncounts take decimal suffixes (1M = 1,000,000). The same options and seed write the same\nfile on every machine. Every record carries the index of the next request to its object\n(for Belady). Exit codes: 0 ok, 1 writing failed, 2 bad option.")
        .arg(
            Arg::new("zipf")
                .long("zipf")
                .value_name("ALPHA")
                .required(true)
                .value_parser(clap::value_parser!(f64))
                .help("Zipf skew α (≥ 0; 0 = uniform)"),
        )
        .arg(
            Arg::new("objects")
                .long("objects")
                .value_name("N")
                .required(true)
                .value_parser(parse_count)
                .help("Distinct objects (ids 1 … N)"),
        )
        .arg(
            Arg::new("requests")
                .long("requests")
                .value_name("N")
                .required(true)
                .value_parser(parse_count)
                .help("Requests"),
        )
        .arg(
            Arg::new("seed")
                .long("seed")
                .value_name("N")
                .default_value("1")
                .value_parser(clap::value_parser!(u64))
                .help("Random seed"),
        )
        .arg(
            Arg::new("object_size")
                .long("object-size")
                .value_name("BYTES")
                .default_value("4K")
                .value_parser(parse_object_size)
                .help(
                    "Size written for every object (bytes; simulate with the same --block-size \
                     for one block per object)",
                ),
        )
        .arg(
            Arg::new("out")
                .short('o')
                .long("out")
                .value_name("FILE")
                .required(true)
                .value_parser(clap::value_parser!(PathBuf))
                .help("The file to write (replaced only when the trace is complete)"),
        )
}

/// A count with an optional decimal suffix: `20M` = 20,000,000.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a count: expected e.g. 1000, 1M or 2.5k"))?;
    let n = v * mult;
    if !(n >= 0.0 && n.fract() == 0.0 && n < 1e18) {
        return Err(format!("`{s}` is not a whole count"));
    }
    Ok(n as u64)
}

fn parse_object_size(s: &str) -> Result<u32, String> {
    let n = iolab_util::parse_size(s).map_err(|e| e.to_string())?;
    if n == 0 || n > u64::from(u32::MAX) {
        return Err(format!("`{s}`: an object size must be 1 B to 4 GiB"));
    }
    Ok(n as u32)
}

/// Writes the trace `m` describes.
pub fn run(m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
    let count = |id: &str| m.get_one::<u64>(id).copied().unwrap_or_default();
    let spec = ZipfSpec {
        alpha: m.get_one::<f64>("zipf").copied().unwrap_or_default(),
        objects: count("objects"),
        requests: count("requests"),
        seed: count("seed"),
        object_size: m.get_one::<u32>("object_size").copied().unwrap_or(4096),
    };
    let out = m.get_one::<PathBuf>("out").cloned().unwrap_or_default();
    spec.validate().map_err(|e| {
        let flag = match e {
            SynthError::Alpha(_) => "--zipf",
            SynthError::Objects(_) => "--objects",
            SynthError::Requests(_) => "--requests",
        };
        CommandError::usage(format!("{flag}: {e}"))
    })?;
    let name = out
        .file_name()
        .ok_or_else(|| CommandError::usage(format!("-o {}: not a file name", out.display())))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(".part");
    let tmp = out.with_file_name(tmp_name);
    let written = write_oracle_file(&spec, &tmp).and_then(|w| {
        std::fs::rename(&tmp, &out)?;
        Ok(w)
    });
    let w = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(match e {
                WriteError::Spec(e) => CommandError::usage(e),
                WriteError::Io(e) => {
                    CommandError::failed(format!("cannot write {}: {e}", out.display()))
                }
            });
        }
    };
    host.say(&format!(
        "{} requests to {} distinct objects (Zipf α = {}, {} objects, seed {}) → {}",
        thousands(w.requests),
        thousands(w.objects),
        spec.alpha,
        thousands(spec.objects),
        spec.seed,
        out.display()
    ));
    let n = out.to_string_lossy();
    if !(n.ends_with(".oracleGeneral") || n.ends_with(".oracleGeneral.bin")) {
        host.say("note: name it *.oracleGeneral.bin for the other commands to recognize its format, or give them --format oracleGeneral");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_decimal_suffixes() {
        assert_eq!(parse_count("20M"), Ok(20_000_000));
        assert_eq!(parse_count("1.5k"), Ok(1_500));
        assert_eq!(parse_count("1000"), Ok(1000));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("x").is_err());
        assert!(parse_count("-1").is_err());
    }
}
