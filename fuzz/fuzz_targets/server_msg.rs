//! The server's side of a connection before anything runs: a client's byte stream read
//! under the server's message size limit, each message decoded, a sent command line
//! checked against the flags a client may use, sent job text parsed with includes
//! refused. None of it may panic, whatever a peer sends.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = iobench::api::server::take_client_bytes(data);
    // Random bytes rarely pass the CRCs: also feed them as one JOB and one JOBLINE.
    use iobench::api::fioproto::{encode, op, pdu};
    let text = String::from_utf8_lossy(data);
    let mut stream = encode(
        op::JOBLINE,
        0,
        &pdu::encode_jobline(&text.split('\n').map(String::from).collect::<Vec<_>>(), 0),
    );
    stream.extend(encode(op::JOB, 0, &pdu::encode_job(&text, 0)));
    let _ = iobench::api::server::take_client_bytes(&stream);
});
