// Package dashboard is `coord dashboard`: a web page of one project for
// the people overseeing its agents, served by the coord binary
// (docs/DASHBOARD.md), read-only unless it has a token and something to act
// with (docs/COMMANDS.md#supervising).
//
// It is a front end like the CLI: it holds no rule. Everything it shows
// comes from app.Reader, the read-only part of the application; the only
// writes it can make are app.Supervisor's five acts (Options.Acts), and
// only with a token. Routes:
//
//	/                the page: every panel, rendered on the server
//	/events          server-sent events: the panels that changed, as
//	                 HTML fragments, after every change (all of them on
//	                 connect, so a reconnecting page is whole again),
//	                 each saying whether the project could be read; a
//	                 ping event every 5 s between changes
//	/api/state.json  the whole state for scripts, in the shapes of the
//	                 matching --json outputs
//	/tasks           every task of one list (?list=ready|waiting|blocked|
//	                 review|claimed|unclaimed|done|all), 200 a page (&page=N)
//	/task            one task (?id=ID): why it waits, what the reviewer
//	                 last said, its fields, receipts and log lines
//	POST /api/tasks/ID/{requeue,assign,unblock,approve,reject}
//	                 an act, as Options.User (acts.go says what guards it)
//	/static/…        the style sheet and the few lines of JavaScript
//
// Promises:
//   - honest: the page's badge says "live" only while its event stream is
//     open and heard from (the page counts a stream silent for 15 s as
//     failed and reconnects) and the last read of the project succeeded;
//     a read that failed, or has gone unanswered for
//     Options.StallAfter (5 s), makes it "not live" with the reason (the
//     backend's URL and what failed), and the page keeps the last state
//     read, saying as of when. Doctor's check is shown only as run
//     against a readable project: while the project cannot be read (or
//     when it could not be read during the check) the alerts say doctor
//     could not run, never that it found nothing, and it runs again as
//     soon as the project answers;
//   - judged as the sweep judges: an agent is stale after the project's
//     stale_after, read again at every build (a change shows without a
//     restart; a hub's namespace keeps the settings it was opened with),
//     unless Options.Timeout (--timeout) says otherwise, and the page
//     names which; throughput counts done tasks only (approved, with the
//     review gate on) and says so, counting the ones waiting in review
//     apart; the advice panel shows coord advise's number (how many
//     agents to run now, app.State's Advice) with the rates behind it,
//     and a plot of the number per half hour, sampled at each build and
//     kept in memory (a restarted dashboard starts its plot again);
//   - live: one builder goroutine waits on the backend's change
//     notification (app.Reader.Until: the wait that `coord wait` and
//     `coord top` use, with its one-second fallback poll) and builds one
//     snapshot per change, shared by every client; an event leaves within
//     a second of a change;
//   - a slow or hung browser never slows an agent: the state is read
//     without any lock a writer waits on (the doctor check, run on its own
//     timer and never because a client asked, is the one exception and
//     holds the registry lock only while it checks), each client has a
//     buffer of one snapshot (a slow client skips the intermediate ones,
//     and a write that does not finish in 10 s drops the client: its
//     browser reconnects), and the HTTP server has read, write and idle
//     timeouts;
//   - safe by default: the CLI binds loopback; any other address needs a
//     token (Options.Token), checked in constant time from
//     "Authorization: Bearer T" or "?token=T" on every route but the
//     static files (401 otherwise); without a token, a request whose Host
//     is not a loopback name is refused (403), so a web page elsewhere
//     cannot read the dashboard through DNS rebinding (with
//     Options.LoopbackOnly, with a token too); only GET and HEAD are
//     answered, and POST to the acts when the page may act;
//   - writes held to the standard of the reads (acts.go): the token from
//     the Authorization header only (never a cookie or the query), no
//     foreign Origin (403), JSON bodies only (415), each act logged
//     under Options.User; without a token every POST is 405 and the page
//     shows no button. Every text a page shows is escaped by html/template
//     or set with textContent;
//   - size: the page shows counts per status and the first Options.Rows
//     of each list with a link to the paginated /tasks; its cost does not
//     grow with the number of tasks beyond building the snapshot.
//
// The conflicts panel shows the conflicts recorded on the work in flight
// (a pair once, as coord conflicts --json prints them) and each agent's
// held task whose work conflicts is marked; the dashboard runs no git:
// the conflicts are those coord conflicts, watch or schedule found.
//
// Limits: the state is as fresh as the last snapshot (an error reading
// the backend keeps the last good one and says so on the page);
// throughput counts the tasks still in the registry (archived ones are
// not seen); /api/state.json holds every task, so it grows with them.
package dashboard
