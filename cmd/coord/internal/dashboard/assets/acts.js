// coord dashboard: the page's actions (docs/COMMANDS.md#supervising), on a page that may
// act (the server put its token in <meta name="coord-token"> and the
// dialog in the page). A button names its action and task in data-*
// attributes; the dialog asks what the action needs (the agent for
// assign, a reason where the command needs one) and POSTs it as JSON with
// the token in the Authorization header, never in a cookie or the URL.
// The result shows at once: the live stream carries the new state (the
// task page, which is not live, reloads).
//
// Text from the server (ids, titles, messages) is only ever set with
// textContent, never parsed as HTML.
(function () {
  var meta = document.querySelector('meta[name="coord-token"]');
  var dlg = document.getElementById('act');
  if (!meta || !dlg) { return; }
  var token = meta.getAttribute('content');
  var el = function (id) { return document.getElementById(id); };
  var title = el('act-title'), what = el('act-what'), toRow = el('act-to-row'), to = el('act-to');
  var reasonRow = el('act-reason-row'), reasonLabel = el('act-reason-label'), reason = el('act-reason');
  var err = el('act-err'), go = el('act-go'), cancel = el('act-cancel'), status = el('act-status');
  var cur = null, busy = false;

  // What each action asks for. need: the reason is required.
  function describe(d) {
    var task = d.task, holder = d.holder || '';
    switch (d.act) {
      case 'requeue':
        return { title: 'Requeue ' + task, what: 'Take ' + task + ' from its holder back to the queue: the holder\'s next write is refused.', to: false, need: true, go: 'requeue' };
      case 'assign':
        if (d.held) {
          return { title: 'Reassign ' + task, what: 'Take ' + task + ' from its holder and push it to another agent\'s inbox.', to: true, need: true, go: 'reassign' };
        }
        return { title: 'Assign ' + task, what: 'Push ' + task + ' to a registered agent\'s inbox (a task in review: to a reviewer).', to: true, need: false, go: 'assign' };
      case 'unblock':
        if (holder) {
          return { title: 'Unblock ' + task, what: 'Return ' + task + ' to the pool: ' + holder + ' takes it first; its branch and notes stay.', to: false, need: true, go: 'unblock' };
        }
        return { title: 'Unblock ' + task, what: task + ' has no owner: it goes back to the queue.', to: false, need: false, go: 'unblock' };
      case 'cancel':
        return { title: 'Cancel ' + task, what: 'Take ' + task + ' out of the work: it is archived as cancelled, its claims freed, its branch kept.', to: false, need: true, go: 'cancel' };
      case 'approve':
        return { title: 'Approve ' + task, what: 'Approve ' + task + ' as its human reviewer: it is done.', to: false, need: false, go: 'approve' };
      case 'reject':
        return { title: 'Reject ' + task, what: 'Hand ' + task + ' back to its owner with your reason as its review notes.', to: false, need: true, go: 'reject' };
    }
    return null;
  }

  function open(d) {
    var how = describe(d);
    if (!how) { return; }
    cur = { act: d.act, task: d.task, how: how };
    title.textContent = how.title;
    what.textContent = how.what;
    toRow.hidden = !how.to;
    to.value = '';
    reason.value = '';
    reasonLabel.textContent = how.need ? 'reason (required, logged)' : 'reason (optional, logged)';
    err.textContent = '';
    go.textContent = how.go;
    go.disabled = false;
    dlg.showModal();
    (how.to ? to : reason).focus();
  }

  function say(text, ok) {
    status.textContent = text;
    status.className = 'actstatus ' + (ok ? 'ok' : 'bad');
  }

  function send() {
    if (!cur || busy) { return; }
    var body = {};
    var r = reason.value.trim();
    if (cur.how.need && !r) { err.textContent = 'Say why: the reason is logged with your name.'; reason.focus(); return; }
    if (r) { body.reason = r; }
    if (cur.how.to) {
      var a = to.value.trim();
      if (!a) { err.textContent = 'Name the agent it goes to.'; to.focus(); return; }
      body.to = a;
    }
    busy = true;
    go.disabled = true;
    err.textContent = '';
    var done = function (ok, text) {
      busy = false;
      go.disabled = false;
      if (!ok) { err.textContent = text; return; }
      dlg.close();
      say(text, true);
      if (document.body.dataset.static) { location.reload(); }
    };
    fetch('api/tasks/' + encodeURIComponent(cur.task) + '/' + encodeURIComponent(cur.act), {
      method: 'POST',
      headers: { 'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error'
    }).then(function (res) {
      return res.json().then(function (j) { done(res.ok, String(j.message || res.status)); },
        function () { done(false, 'the dashboard answered ' + res.status); });
    }, function (e) { done(false, 'no answer from the dashboard: ' + e); });
  }

  document.addEventListener('click', function (e) {
    var b = e.target.closest ? e.target.closest('button.act') : null;
    if (b) { open(b.dataset); }
  });
  go.addEventListener('click', send);
  cancel.addEventListener('click', function () { dlg.close(); });
  to.addEventListener('keydown', function (e) { if (e.key === 'Enter') { e.preventDefault(); send(); } });
  reason.addEventListener('keydown', function (e) { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); send(); } });
})();
