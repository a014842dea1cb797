//! One remoting connection on a blocking `TcpStream`: the thin shell around [`crate::wire`].
//!
//! A broker in the driver is nothing but its connections: the name server keys a live entry by
//! the address in the REGISTER_BROKER header, and ties it to the channel the request came on
//! (`BrokerLiveInfo.channel`). So "the broker crashed" is "its connection closed", and "its host
//! is down" is "its connection is open and silent" — exactly what the name server can tell.

use crate::wire::Frame;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub struct Conn {
    stream: TcpStream,
    next_opaque: i32,
    /// The highest `opaque` the drain thread has heard answered (see [`Conn::drain`]).
    answered: Arc<(Mutex<i32>, Condvar)>,
}

impl Conn {
    pub fn open(addr: SocketAddr, timeout: Duration) -> std::io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        Ok(Conn { stream, next_opaque: 1, answered: Arc::default() })
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
            let frame = read_frame(&mut self.stream)?;
            if frame.is_response() && frame.header.opaque == opaque {
                return Ok(frame);
            }
        }
    }

    /// Sends a request without waiting, and returns its `opaque`: a broker's answers are read by
    /// a thread of their own (see [`Conn::drain`]), so a hung name server never stalls the driver,
    /// and [`Conn::await_answer`] waits for one when the order matters.
    pub fn send(&mut self, code: i32, fields: &[(&str, String)], body: Vec<u8>) -> std::io::Result<i32> {
        let opaque = self.opaque();
        self.stream.write_all(&Frame::request(code, opaque, fields, body).encode())?;
        Ok(opaque)
    }

    /// Reads whatever the name server answers on this connection until it closes, noting the
    /// highest answered `opaque`.
    pub fn drain(&self) -> std::io::Result<()> {
        let mut reader = self.stream.try_clone()?;
        reader.set_read_timeout(None)?;
        let answered = Arc::clone(&self.answered);
        std::thread::spawn(move || {
            while let Ok(frame) = read_frame(&mut reader) {
                if frame.is_response() {
                    let (heard, cv) = &*answered;
                    let mut heard = heard.lock().expect("no panics while held");
                    *heard = (*heard).max(frame.header.opaque);
                    cv.notify_all();
                }
            }
        });
        Ok(())
    }

    /// Waits until the answer to `opaque` (sent with [`Conn::send`] on a drained connection) has
    /// been heard, or `deadline` passes; says which.
    pub fn await_answer(&self, opaque: i32, deadline: Instant) -> bool {
        let (heard, cv) = &*self.answered;
        let mut heard = heard.lock().expect("no panics while held");
        while *heard < opaque {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            heard = cv.wait_timeout(heard, deadline - now).expect("no panics while held").0;
        }
        true
    }

    /// Sends `code` with the oneway flag: the name server answers nothing.
    pub fn oneway(&mut self, code: i32, fields: &[(&str, String)], body: Vec<u8>) -> std::io::Result<()> {
        let opaque = self.opaque();
        self.stream.write_all(&Frame::request(code, opaque, fields, body).oneway().encode())
    }

    /// Closes the socket: the kernel sends a FIN, and the name server's channel goes inactive
    /// (`BrokerHousekeepingService#onChannelClose`), as when the broker process is killed.
    pub fn close(self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn read_frame(stream: &mut TcpStream) -> std::io::Result<Frame> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    // A name server's answer is a route or a cluster table: kilobytes. Anything near this
    // bound is a desynchronised stream, not an answer.
    if len > 64 << 20 {
        return Err(std::io::Error::other(format!("a frame of {len} bytes: the stream is out of step")));
    }
    let mut frame = vec![0u8; len];
    stream.read_exact(&mut frame)?;
    Frame::decode(&frame).map_err(std::io::Error::other)
}
