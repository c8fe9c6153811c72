"""The review app's route handlers, one module per screen: ``login`` (log in and out), ``reviewer`` (the queue and the
rating form), ``admin`` (payouts, ratings, the round overview, settling), ``accounts`` (reviewers and their exams),
``items`` (an item's page: validation, committee, audit). Each is a plain Starlette endpoint over
:class:`benchmark_platform.review.pages.Context`; ``web.create_app`` wires them."""
