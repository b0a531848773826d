// coord dashboard: swap in the panels the server sends after each change
// (server-sent events); EventSource reconnects by itself, and the first
// event of every connection carries every panel.
(function () {
  var conn = document.getElementById('conn');
  function say(text, cls) { conn.textContent = text; conn.className = 'conn ' + cls; }
  function connect() {
    var es = new EventSource('events' + location.search);
    es.onopen = function () { say('live', 'live'); };
    es.onerror = function () {
      say('reconnecting…', 'down');
      if (es.readyState === 2) { setTimeout(connect, 5000); } // refused: try again later
    };
    es.addEventListener('panels', function (e) {
      var m = JSON.parse(e.data);
      for (var id in m.panels) {
        var el = document.getElementById(id);
        if (el) { el.innerHTML = m.panels[id]; }
      }
      document.body.dataset.seq = m.seq;
      document.body.dataset.at = Date.now();
    });
  }
  connect();
})();
