//! A package index on 127.0.0.1 that the battery can make misbehave: PEP 691
//! pages for any set of wheels (with or without the size the page announces,
//! under any file name), and bodies that never end.

#![allow(dead_code)]

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the index serves for one file.
#[derive(Clone)]
pub enum Body {
    /// These bytes, with a Content-Length.
    Bytes(Vec<u8>),
    /// Zeros, without a Content-Length, until the client hangs up.
    EndlessZeros,
}

/// One file of a project page.
#[derive(Clone)]
pub struct Wheel {
    pub project: String,
    /// The file name the page gives (`filename`), as hostile as a test likes.
    pub filename: String,
    /// The path under `/files/` it is served at.
    pub served_as: String,
    pub sha256: String,
    /// The size the page announces (none: the page says nothing).
    pub size: Option<u64>,
    pub body: Body,
}

impl Wheel {
    /// A well-formed wheel `filename` of `project` with its true hash and size.
    pub fn new(project: &str, filename: &str, bytes: Vec<u8>) -> Wheel {
        Wheel {
            project: project.into(),
            filename: filename.into(),
            served_as: filename.into(),
            sha256: crate::pypi::sha256(&bytes),
            size: Some(bytes.len() as u64),
            body: Body::Bytes(bytes),
        }
    }
}

pub struct Index {
    pub port: u16,
    pub wheels: Arc<Mutex<Vec<Wheel>>>,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Index {
    pub fn start(wheels: Vec<Wheel>) -> Index {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let wheels = Arc::new(Mutex::new(wheels));
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let (w, h) = (wheels.clone(), hits.clone());
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                let (w, h) = (w.clone(), h.clone());
                std::thread::spawn(move || {
                    let _ = serve(s, port, &w, &h);
                });
            }
        });
        Index { port, wheels, hits }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/simple", self.port)
    }

    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }

    pub fn downloads(&self) -> usize {
        self.hits()
            .iter()
            .filter(|h| h.starts_with("/files/"))
            .count()
    }
}

fn serve(
    mut s: TcpStream,
    port: u16,
    wheels: &Mutex<Vec<Wheel>>,
    hits: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    let (path, _) = crate::common::request(&s)?;
    hits.lock().unwrap().push(path.clone());
    let wheels = wheels.lock().unwrap().clone();
    if let Some(project) = path
        .strip_prefix("/simple/")
        .and_then(|p| p.strip_suffix('/'))
    {
        let files: Vec<_> = wheels
            .iter()
            .filter(|w| w.project == project)
            .map(|w| {
                let mut f = serde_json::json!({
                    "filename": w.filename,
                    "url": format!("http://127.0.0.1:{port}/files/{}", w.served_as),
                    "hashes": {"sha256": w.sha256},
                });
                if let Some(size) = w.size {
                    f["size"] = size.into();
                }
                f
            })
            .collect();
        if files.is_empty() {
            return write!(
                s,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        let json = serde_json::json!({
            "meta": {"api-version": "1.1"},
            "name": project,
            "files": files,
        })
        .to_string();
        return write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
            json.len()
        );
    }
    let Some(w) = wheels
        .iter()
        .find(|w| path == format!("/files/{}", w.served_as))
    else {
        return write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    };
    match &w.body {
        Body::Bytes(b) => {
            write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                b.len()
            )?;
            s.write_all(b)
        }
        Body::EndlessZeros => {
            write!(s, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")?;
            let block = vec![0u8; 1 << 16];
            loop {
                s.write_all(&block)?;
            }
        }
    }
}
