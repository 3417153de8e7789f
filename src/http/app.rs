//! The service a connection's requests go to: [`App`]. `/mcp` goes straight to the
//! guard's checks ([`guard::host_problem`], [`guard::admit`]) and the MCP front; every other
//! path (and `/mcp` too when CORS is configured, whose layer lives on the router) goes
//! through the axum router [`super::app()`] builds. The checks are the router's own layers
//! for `/mcp`, in the same order, so both ways answer alike; the direct way skips route
//! matching and two boxed middleware stacks on every MCP request.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use tower::Service;

use super::guard::{self, Guard};
use crate::mcp::streamable::SdkFront;

/// The path of the Streamable HTTP endpoint.
const MCP_PATH: &str = "/mcp";

/// The router, and `/mcp` beside it when it is served directly. A clone is cheap.
#[derive(Clone)]
pub struct App {
    router: Router,
    mcp: Option<Arc<McpRoute>>,
}

/// `/mcp` served without the router: the host check, the guard, the MCP front.
struct McpRoute {
    guard: Arc<Guard>,
    front: SdkFront,
}

/// What [`App::answer`] answers with.
pub type AppFuture = Either<
    axum::routing::future::RouteFuture<Infallible>,
    Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>,
>;

impl App {
    /// `router` alone: every request is routed.
    pub fn routed(router: Router) -> App {
        App { router, mcp: None }
    }

    /// `router`, with `/mcp` answered by `front` behind `guard` without routing. The router
    /// must serve `/mcp` the same way (behind `guard::one_host` and `guard::mcp`): the
    /// integration tests run the host checks both ways (with CORS, the routed way).
    pub(super) fn with_mcp(router: Router, guard: Arc<Guard>, front: SdkFront) -> App {
        App {
            router,
            mcp: Some(Arc::new(McpRoute { guard, front })),
        }
    }

    /// Answers `request`.
    pub fn answer(&self, request: Request) -> AppFuture {
        match &self.mcp {
            Some(mcp) if request.uri().path() == MCP_PATH => {
                let mcp = mcp.clone();
                Either::Right(crate::alloc::pinned(move || mcp.serve(request)))
            }
            _ => Either::Left(self.router.clone().call(request)),
        }
    }
}

impl Service<Request> for App {
    type Response = Response;
    type Error = Infallible;
    type Future = AppFuture;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> AppFuture {
        self.answer(request)
    }
}

impl From<Router> for App {
    fn from(router: Router) -> App {
        App::routed(router)
    }
}

impl McpRoute {
    /// [`guard::admit`] around the front, its two halves called here so that the request
    /// moves once, into the front's call (each future it passed through copied it).
    async fn serve(self: Arc<Self>, mut request: Request) -> Result<Response, Infallible> {
        if let Some(refused) = guard::host_problem(&request) {
            return Ok(refused);
        }
        if let Err(refused) = guard::admit_request(&self.guard, &mut request).await {
            return Ok(refused);
        }
        let mut response = self.front.clone().call(request).await?;
        guard::challenge_scope(&self.guard, &mut response);
        Ok(response)
    }
}
