"""Conversation titles for sample data, as Cursor names conversations after their first prompt.

Titles are drawn from their own random stream (seed and namespace), never from a
conversation's: adding them changed no other value the generators write. Plain ASCII without
quotes or backslashes, so that writers that build JSON by hand need no escaping.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Final

TITLES: Final = (
    "Fix login redirect loop",
    "Add pagination to the users API",
    "Refactor auth middleware",
    "Debug flaky checkout test",
    "Speed up the Docker build",
    "Migrate sessions to Redis",
    "Write tests for the rate limiter",
    "Explain the webhook retry logic",
    "Add dark mode toggle",
    "Fix CORS error on staging",
    "Set up GitHub Actions CI",
    "Clean up unused feature flags",
    "Add CSV export to reports",
    "Fix memory leak in the worker",
    "Upgrade React Router to v7",
    "Add retries to the payment client",
    "Document the deploy process",
    "Fix timezone bug in invoices",
    "Add an index for slow orders query",
    "Review the database schema",
    "Split the monolith config",
    "Handle 429s from the GitHub API",
    "Add form validation to signup",
    "Fix broken image uploads",
    "Write a migration for user roles",
    "Cache the dashboard queries",
    "Add structured logging",
    "Fix the hydration mismatch",
    "Port the CLI from bash to Python",
    "Add OpenTelemetry tracing",
    "Fix race condition in job queue",
    "Add search to the docs site",
    "Refactor the billing service",
    "Fix N+1 queries in the feed",
    "Add unit tests for the parser",
    "Set up Kubernetes health checks",
    "Fix typing errors after mypy upgrade",
    "Add a cron job for cleanup",
    "Explain this regex",
    "Improve error messages in the CLI",
    "Add email verification",
    "Fix the Terraform plan diff",
    "Tune Postgres connection pool",
    "Add keyboard shortcuts to the editor",
    "Fix the failing e2e tests",
    "Add a settings page",
    "Migrate from Jest to Vitest",
    "Fix SSR cookies in Next.js",
    "Add GraphQL subscriptions",
    "Reduce bundle size",
    "Fix off-by-one in pagination",
    "Add an S3 upload presigner",
    "Write the README quick start",
    "Add rate limiting per API key",
    "Fix websocket reconnects",
    "Add a notebook for churn analysis",
    "Train the baseline model",
    "Fix NaN loss in training",
    "Add data validation to the pipeline",
    "Plot latency percentiles",
    "Add Helm chart for the API",
    "Rotate the database credentials",
    "Fix the nginx proxy timeout",
    "Add feature flag for new checkout",
    "Refactor the state store",
    "Add optimistic updates to the cart",
    "Fix flaky snapshot tests",
    "Add i18n for German",
    "Fix accessibility issues in the modal",
    "Add an admin audit log",
    "Write integration tests for the webhook",
    "Fix the broken sitemap",
    "Add OAuth login with Google",
    "Fix slow cold start",
    "Add backpressure to the consumer",
    "Refactor the date helpers",
    "Fix the infinite scroll jump",
    "Add retry jitter to the client",
    "Set up preview deployments",
    "Fix the Makefile on macOS",
)


@cache
def _order(seed: int, namespace: str) -> tuple[str, ...]:
    titles = list(TITLES)
    random.Random(f"titles/{namespace}/{seed}").shuffle(titles)
    return tuple(titles)


def sample_title(seed: int, namespace: str, index: int) -> str:
    """The title of a sample's `index`-th conversation of `namespace`: every title once before
    any repeats, in an order fixed by the seed."""
    order = _order(seed, namespace)
    return order[index % len(order)]
