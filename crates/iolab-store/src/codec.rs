//! Compact BLOB encodings for arrays of integers.
//!
//! Histograms and interval series are read whole and never queried element by element, so
//! they are BLOBs rather than rows: a run with 20 flowops × 300 buckets and a one-hour series
//! would otherwise add ~10 000 rows. Every number is an unsigned LEB128 varint (7 bits per
//! byte, low groups first, high bit = more bytes follow), the encoding of protobuf and DWARF:
//! small counts take one byte, and a u64 never more than ten.
//!
//! - Interval series (`interval_series.ops`, `.bytes`): one varint per interval, in order.
//! - Histograms (`flowop_stats.histogram`): pairs `(upper_ns − previous upper_ns, count)`,
//!   upper bounds strictly increasing and the first delta taken from 0. HDR bucket bounds
//!   grow geometrically, so the deltas stay short.
//!
//! The blob formats belong to the schema version: changing one is a migration.

/// Why a blob could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    Truncated,
    Overlong,
    OddPairs,
    Overflow,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DecodeError::Truncated => "a varint is cut short",
            DecodeError::Overlong => "a varint is longer than 10 bytes",
            DecodeError::OddPairs => "a histogram bucket has no count",
            DecodeError::Overflow => "histogram bounds exceed 2^64",
        })
    }
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get(bytes: &[u8], pos: &mut usize) -> Result<u64, DecodeError> {
    let mut v: u64 = 0;
    for i in 0..10 {
        let b = *bytes.get(*pos).ok_or(DecodeError::Truncated)?;
        *pos += 1;
        let low = u64::from(b & 0x7f);
        if i == 9 && low > 1 {
            return Err(DecodeError::Overlong);
        }
        v |= low << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err(DecodeError::Overlong)
}

pub(crate) fn encode_u64s(values: &[u64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 2);
    for &v in values {
        put(&mut out, v);
    }
    out
}

pub(crate) fn decode_u64s(bytes: &[u8]) -> Result<Vec<u64>, DecodeError> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut pos = 0;
    while pos < bytes.len() {
        out.push(get(bytes, &mut pos)?);
    }
    Ok(out)
}

/// Sorts by bound and merges equal bounds first, so any bucket list encodes losslessly as a
/// distribution.
pub(crate) fn encode_histogram(buckets: &[(u64, u64)]) -> Vec<u8> {
    let mut sorted = buckets.to_vec();
    sorted.sort_unstable_by_key(|&(upper, _)| upper);
    let mut out = Vec::with_capacity(sorted.len() * 3);
    let mut prev: Option<(u64, u64)> = None;
    let mut last_upper = 0;
    let mut flush = |out: &mut Vec<u8>, (upper, count): (u64, u64)| {
        put(out, upper - last_upper);
        put(out, count);
        last_upper = upper;
    };
    for (upper, count) in sorted {
        match prev {
            Some((u, c)) if u == upper => prev = Some((u, c.saturating_add(count))),
            Some(p) => {
                flush(&mut out, p);
                prev = Some((upper, count));
            }
            None => prev = Some((upper, count)),
        }
    }
    if let Some(p) = prev {
        flush(&mut out, p);
    }
    out
}

pub(crate) fn decode_histogram(bytes: &[u8]) -> Result<Vec<(u64, u64)>, DecodeError> {
    let values = decode_u64s(bytes)?;
    if values.len() % 2 != 0 {
        return Err(DecodeError::OddPairs);
    }
    let mut upper: u64 = 0;
    values
        .chunks_exact(2)
        .map(|pair| {
            upper = upper.checked_add(pair[0]).ok_or(DecodeError::Overflow)?;
            Ok((upper, pair[1]))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_at_the_edges() {
        let values = [
            0,
            1,
            127,
            128,
            255,
            16_383,
            16_384,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ];
        let blob = encode_u64s(&values);
        assert_eq!(decode_u64s(&blob).unwrap(), values);
        assert_eq!(encode_u64s(&[0, 127, 128]), [0x00, 0x7f, 0x80, 0x01]);
        assert_eq!(encode_u64s(&[u64::MAX]).len(), 10);
        assert_eq!(decode_u64s(&[]).unwrap(), Vec::<u64>::new());
    }

    #[test]
    fn bad_varints_are_errors() {
        assert_eq!(decode_u64s(&[0x80]), Err(DecodeError::Truncated));
        assert_eq!(decode_u64s(&[0xff; 11]), Err(DecodeError::Overlong));
        // Ten bytes whose last carries more than the 64th bit.
        let mut too_big = vec![0xff; 9];
        too_big.push(0x02);
        assert_eq!(decode_u64s(&too_big), Err(DecodeError::Overlong));
    }

    #[test]
    fn histograms_delta_encode_and_round_trip() {
        let h = vec![(0, 3), (1023, 7), (1031, 1), (1 << 40, 2), (u64::MAX, 1)];
        let blob = encode_histogram(&h);
        assert_eq!(decode_histogram(&blob).unwrap(), h);
        assert_eq!(
            encode_histogram(&[(1000, 1), (1010, 2)]),
            [0xe8, 0x07, 0x01, 0x0a, 0x02]
        );
        assert!(encode_histogram(&[]).is_empty());
    }

    #[test]
    fn unsorted_histograms_are_sorted_and_merged() {
        let blob = encode_histogram(&[(20, 1), (10, 2), (20, 3)]);
        assert_eq!(decode_histogram(&blob).unwrap(), vec![(10, 2), (20, 4)]);
    }

    #[test]
    fn bad_histograms_are_errors() {
        assert_eq!(decode_histogram(&[1]), Err(DecodeError::OddPairs));
        let mut blob = encode_u64s(&[u64::MAX, 1]);
        blob.extend(encode_u64s(&[1, 1]));
        assert_eq!(decode_histogram(&blob), Err(DecodeError::Overflow));
    }
}
