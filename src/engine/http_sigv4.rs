//! AWS Signature Version 4, as the http engine's S3 mode signs each request: the
//! canonical request, the string to sign, the derived signing key (cached for the day)
//! and the signature, over SHA-256 and HMAC-SHA-256 from the `sha2` and `hmac` crates.
//! The functions are general (any method, path, query, header set, service), so the unit
//! tests check them against AWS's published test suite and botocore's signer; the
//! engine's own choices (which headers it signs, the payload hash it sends) are in
//! `http.rs`.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::fmt::Write;

type HmacSha256 = Hmac<Sha256>;

/// The algorithm name in the string to sign and the Authorization header.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// The SHA-256 of an empty payload, in hex (every GET and DELETE sends it).
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The SHA-256 of `data`, in lowercase hex (the payload hash and the canonical request's).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length, so new_from_slice cannot fail.
    let mut m = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    m.update(data);
    m.finalize().into_bytes().into()
}

/// A path as S3 signs it (and as the engine sends it): letters, digits, `_ - ~ . /` stay,
/// every other byte becomes `%XX` in upper-case hex.
pub fn encode_path(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'~' | b'.' | b'/') {
            s.push(b as char);
        } else {
            let _ = write!(s, "%{b:02X}");
        }
    }
    s
}

/// The key that signs a day's requests for one region and service:
/// HMAC("AWS4" + secret, date) → region → service → "aws4_request".
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> [u8; 32] {
    let k = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac(&k, region.as_bytes());
    let k = hmac(&k, service.as_bytes());
    hmac(&k, b"aws4_request")
}

/// The `SignedHeaders` list: the header names, `;`-separated, in the order given (which
/// must be sorted and lower-case).
pub fn signed_headers(headers: &[(&str, &str)]) -> String {
    let names: Vec<&str> = headers.iter().map(|(n, _)| *n).collect();
    names.join(";")
}

/// The canonical request: method, URI (already encoded), canonical query string,
/// `name:value` lines, the signed header list and the payload hash. `headers` are the
/// signed ones, lower-case names sorted, values as sent.
pub fn canonical_request(
    method: &str,
    uri: &str,
    query: &str,
    headers: &[(&str, &str)],
    payload_hash: &str,
) -> String {
    let mut s = String::with_capacity(256);
    let _ = write!(s, "{method}\n{uri}\n{query}\n");
    for (n, v) in headers {
        let _ = writeln!(s, "{n}:{}", v.trim());
    }
    let _ = write!(s, "\n{}\n{payload_hash}", signed_headers(headers));
    s
}

/// The credential scope: `date/region/service/aws4_request`.
pub fn scope(date: &str, region: &str, service: &str) -> String {
    format!("{date}/{region}/{service}/aws4_request")
}

/// The string to sign for a canonical request made at `amz_date` (`YYYYMMDDTHHMMSSZ`).
pub fn string_to_sign(amz_date: &str, scope: &str, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        sha256_hex(canonical_request.as_bytes())
    )
}

/// The signature: HMAC of the string to sign under the signing key, in hex.
pub fn signature(key: &[u8; 32], string_to_sign: &str) -> String {
    hex(&hmac(key, string_to_sign.as_bytes()))
}

/// The Authorization header's value, in the layout fio sends (no spaces after commas).
pub fn authorization(key_id: &str, scope: &str, signed: &str, signature: &str) -> String {
    format!("{ALGORITHM} Credential={key_id}/{scope},SignedHeaders={signed},Signature={signature}")
}

/// `x-amz-date`'s form of a time in seconds since the epoch (UTC): `YYYYMMDDTHHMMSSZ`.
pub fn amz_date(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The Gregorian (year, month, day) of a day counted from 1970-01-01, through the
/// 400-year era arithmetic (eras start on March 1st so leap days come last).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

/// A signer for one set of credentials, keeping the day's signing key.
#[derive(Debug, Clone)]
pub struct Signer {
    key_id: String,
    secret: String,
    region: String,
    service: String,
    /// The date (`YYYYMMDD`) the cached key is for, and the key.
    cached: Option<(String, [u8; 32])>,
}

impl Signer {
    pub fn new(key_id: &str, secret: &str, region: &str, service: &str) -> Self {
        Signer {
            key_id: key_id.into(),
            secret: secret.into(),
            region: region.into(),
            service: service.into(),
            cached: None,
        }
    }

    /// The Authorization header for a request at `amz_date` with these signed headers
    /// (lower-case, sorted) and payload hash.
    pub fn authorize(
        &mut self,
        method: &str,
        uri: &str,
        query: &str,
        headers: &[(&str, &str)],
        payload_hash: &str,
        amz_date: &str,
    ) -> String {
        let date = &amz_date[..8.min(amz_date.len())];
        if self.cached.as_ref().is_none_or(|(d, _)| d != date) {
            let key = signing_key(&self.secret, date, &self.region, &self.service);
            self.cached = Some((date.to_string(), key));
        }
        let key = &self.cached.as_ref().expect("set above").1;
        let scope = scope(date, &self.region, &self.service);
        let creq = canonical_request(method, uri, query, headers, payload_hash);
        let sts = string_to_sign(amz_date, &scope, &creq);
        authorization(
            &self.key_id,
            &scope,
            &signed_headers(headers),
            &signature(key, &sts),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's SigV4 test suite (aws-sig-v4-test-suite) uses these credentials, region,
    /// service and time for every case.
    const KEY_ID: &str = "AKIDEXAMPLE";
    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
    const DATE: &str = "20150830T123600Z";

    fn suite_case(method: &str, query: &str) -> (String, String) {
        let headers = [("host", "example.amazonaws.com"), ("x-amz-date", DATE)];
        let creq = canonical_request(method, "/", query, &headers, EMPTY_SHA256);
        let mut s = Signer::new(KEY_ID, SECRET, "us-east-1", "service");
        (
            creq,
            s.authorize(method, "/", query, &headers, EMPTY_SHA256, DATE),
        )
    }

    /// get-vanilla: the canonical request, the hash in its string to sign, and the
    /// signature, as the suite publishes them.
    #[test]
    fn aws_suite_get_vanilla() {
        let (creq, auth) = suite_case("GET", "");
        assert_eq!(
            creq,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n\
             host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            string_to_sign(DATE, &scope("20150830", "us-east-1", "service"), &creq),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n\
             bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63"
        );
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request,\
             SignedHeaders=host;x-amz-date,\
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    /// post-vanilla: only the method differs, and so does the signature.
    #[test]
    fn aws_suite_post_vanilla() {
        let (_, auth) = suite_case("POST", "");
        assert!(
            auth.ends_with(
                "Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
            ),
            "{auth}"
        );
    }

    /// get-vanilla-query-order-key-case: the query, sorted by key, is signed.
    #[test]
    fn aws_suite_get_vanilla_query_order_key_case() {
        let (_, auth) = suite_case("GET", "Param1=value1&Param2=value2");
        assert!(
            auth.ends_with(
                "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"
            ),
            "{auth}"
        );
    }

    /// The signing key does not depend on the request: the cached one signs the same.
    #[test]
    fn cached_key_signs_as_a_fresh_one() {
        let headers = [("host", "example.amazonaws.com"), ("x-amz-date", DATE)];
        let mut s = Signer::new(KEY_ID, SECRET, "us-east-1", "service");
        let a = s.authorize("GET", "/", "", &headers, EMPTY_SHA256, DATE);
        let b = s.authorize("GET", "/", "", &headers, EMPTY_SHA256, DATE);
        assert_eq!(a, b);
        let other = s.authorize("GET", "/", "", &headers, EMPTY_SHA256, "20150831T000000Z");
        assert_ne!(a, other, "a new day derives a new key");
    }

    #[test]
    fn amz_date_is_utc_calendar_time() {
        assert_eq!(amz_date(1_440_938_160), "20150830T123600Z");
        assert_eq!(amz_date(0), "19700101T000000Z");
        // A leap day, and the day after.
        assert_eq!(amz_date(951_782_400), "20000229T000000Z");
        assert_eq!(amz_date(951_868_799), "20000229T235959Z");
        assert_eq!(amz_date(951_868_800), "20000301T000000Z");
    }

    #[test]
    fn paths_encode_as_fio_encodes_them() {
        assert_eq!(encode_path("/bkt/a_b-c~d.e/f"), "/bkt/a_b-c~d.e/f");
        assert_eq!(encode_path("/bkt/a b+c=d:é"), "/bkt/a%20b%2Bc%3Dd%3A%C3%A9");
    }
}
