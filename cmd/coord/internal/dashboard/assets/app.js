// coord dashboard: swap in the panels the server sends after each change
// (server-sent events). EventSource reconnects by itself, and the first
// event of every connection carries every panel.
//
// The badge says "live" only while both hold: the event stream is open
// and heard from (a change or a ping at least every few seconds), and the
// server could read the project when it sent its last event. Otherwise it
// says "not live" and why; the panels then show what was last received.
(function () {
  var conn = document.getElementById('conn');
  var silentAfter = 15000; // three of the server's 5 s pings
  var es = null, open = false, live = false, why = '', heard = 0;
  function say(text, cls, title) {
    conn.textContent = text;
    conn.className = 'conn ' + cls;
    conn.title = title;
  }
  function show() {
    if (!open) {
      say('not live: no connection to the dashboard; reconnecting…', 'down',
        'the event stream from the dashboard failed; the page shows what it last received');
    } else if (!live) {
      say('not live: ' + why, 'down', why + ' (the page shows the last state read)');
    } else {
      say('live', 'live', 'changes appear as they happen');
    }
  }
  function connect() {
    es = new EventSource('events' + location.search);
    es.onerror = function () {
      open = false;
      show();
      if (es.readyState === 2) { setTimeout(connect, 5000); } // refused: try again later
    };
    es.addEventListener('ping', function () { heard = Date.now(); });
    es.addEventListener('panels', function (e) {
      var m = JSON.parse(e.data);
      for (var id in m.panels) {
        var el = document.getElementById(id);
        if (el) { el.innerHTML = m.panels[id]; }
      }
      heard = Date.now();
      open = true;
      live = m.live === true;
      why = m.why || 'the dashboard cannot read the project';
      show();
      document.body.dataset.seq = m.seq;
      document.body.dataset.at = heard;
    });
  }
  // A stream that went quiet (a proxy holding it, a laptop that slept)
  // is not live: say so and open a new one.
  setInterval(function () {
    if (open && Date.now() - heard > silentAfter) {
      open = false;
      show();
      es.close();
      connect();
    }
  }, 1000);
  say('connecting…', 'down', 'opening the event stream');
  connect();
})();
