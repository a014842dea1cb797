//! One remoting connection on a blocking `TcpStream`: the thin shell around [`crate::wire`].
//!
//! A broker in the driver is nothing but its connections: the name server keys a live entry by
//! the address in the REGISTER_BROKER header, and ties it to the channel the request came on
//! (`BrokerLiveInfo.channel`). So "the broker crashed" is "its connection closed", and "its host
//! is down" is "its connection is open and silent" — exactly what the name server can tell.

use crate::wire::Frame;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

pub struct Conn {
    stream: TcpStream,
    next_opaque: i32,
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> std::io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Conn { stream, next_opaque: 1 })
    }

    fn opaque(&mut self) -> i32 {
        self.next_opaque = self.next_opaque.wrapping_add(1);
        self.next_opaque
    }

    /// Sends `code` and waits for its answer (the frame with the same `opaque`). Responses to
    /// earlier requests that timed out are skipped.
    pub fn call(&mut self, code: i32, fields: &[(&str, String)], body: Vec<u8>) -> std::io::Result<Frame> {
        let opaque = self.opaque();
        self.stream.write_all(&Frame::request(code, opaque, fields, body).encode())?;
        loop {
            let frame = self.read_frame()?;
            if frame.is_response() && frame.header.opaque == opaque {
                return Ok(frame);
            }
        }
    }

    /// Sends a request without waiting: a broker's answers are read and dropped by a thread of
    /// their own (see [`Conn::drain`]), so a hung name server never stalls the driver.
    pub fn send(&mut self, code: i32, fields: &[(&str, String)], body: Vec<u8>) -> std::io::Result<()> {
        let opaque = self.opaque();
        self.stream.write_all(&Frame::request(code, opaque, fields, body).encode())
    }

    /// Reads and drops whatever the name server answers on this connection, until it closes.
    pub fn drain(&self) -> std::io::Result<()> {
        let mut reader = self.stream.try_clone()?;
        reader.set_read_timeout(None)?;
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while matches!(reader.read(&mut buf), Ok(n) if n > 0) {}
        });
        Ok(())
    }

    /// Sends `code` with the oneway flag: the name server answers nothing.
    pub fn oneway(&mut self, code: i32, fields: &[(&str, String)], body: Vec<u8>) -> std::io::Result<()> {
        let opaque = self.opaque();
        self.stream.write_all(&Frame::request(code, opaque, fields, body).oneway().encode())
    }

    fn read_frame(&mut self) -> std::io::Result<Frame> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        // A name server's answer is a route or a cluster table: kilobytes. Anything near this
        // bound is a desynchronised stream, not an answer.
        if len > 64 << 20 {
            return Err(std::io::Error::other(format!("a frame of {len} bytes: the stream is out of step")));
        }
        let mut frame = vec![0u8; len];
        self.stream.read_exact(&mut frame)?;
        Frame::decode(&frame).map_err(std::io::Error::other)
    }

    /// Closes the socket: the kernel sends a FIN, and the name server's channel goes inactive
    /// (`BrokerHousekeepingService#onChannelClose`), as when the broker process is killed.
    pub fn close(self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}
