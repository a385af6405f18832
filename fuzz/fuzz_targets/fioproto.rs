//! fio's client/server messages: the byte stream parser (headers, CRC16s, fragments) and,
//! since random bytes rarely pass a CRC, every payload decoder fed directly (the first
//! byte picks the opcode). Neither may panic, whatever comes off the wire.
#![no_main]

use iobench::api::fioproto::{decode_all, op, pdu, Cmd};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (cmds, _end) = decode_all(data);
    for c in &cmds {
        let _ = pdu::decode(c, true);
        let _ = pdu::decode(c, false);
    }
    if let Some((&pick, rest)) = data.split_first() {
        let cmd = Cmd::new(u16::from(pick) % (op::NR + 2), 0, rest.to_vec());
        match pdu::decode(&cmd, pick & 0x80 != 0) {
            Ok(pdu::Message::Iolog(log)) => {
                let _ = log.text();
            }
            // What the client draws from a server's status: summed and rendered.
            Ok(pdu::Message::Eta(e)) => {
                let total = iobench::api::client::eta::sum([&e, &e]);
                let mut line = iobench::api::client::eta::StatusLine::new(1);
                let _ = line.render(&total, 0);
                let _ = line.render(&e, 5000);
            }
            _ => {}
        }
    }
});
