// askbridge web inbox: live updates over Server-Sent Events. The pages work
// without this file; it only keeps them current and updates countdowns.
(function () {
  "use strict";
  var body = document.body;
  var page = body.dataset.page;
  if (page === "login" || page === "refused") return;

  var live = document.getElementById("live");
  function announce(text) {
    if (!live) return;
    live.textContent = "";
    window.setTimeout(function () { live.textContent = text; }, 50);
  }

  // Times: shown in the reader's local time, UTC on hover (the page
  // as served shows UTC, which stays right without JavaScript).
  var localFmt = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short" });
  var utcFmt = new Intl.DateTimeFormat("en-US", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" });
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d)) return;
      var utc = utcFmt.format(d) + " UTC";
      if (t.hasAttribute("data-countdown")) {
        t.title = "Expires " + localFmt.format(d) + " (" + utc + ")";
      } else if (t.hasAttribute("data-local") && !t.dataset.localised) {
        t.textContent = localFmt.format(d);
        t.title = utc;
        t.dataset.localised = "1";
      }
    });
  }
  localTimes(document);
  new MutationObserver(function () { localTimes(document); }).observe(document.getElementById("main"), { childList: true, subtree: true });

  // Countdowns: "expires in 4 min 12 s", moving every second.
  function human(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min " + (s % 60) + " s";
    if (s < 48 * 3600) {
      var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
      return m ? h + " h " + m + " min" : h + " h";
    }
    return Math.floor(s / 86400) + " days";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("time[data-countdown]").forEach(function (t) {
      var left = Date.parse(t.getAttribute("datetime")) - now;
      var text = left > 0 ? "expires in " + human(left) : "expired";
      if (t.textContent !== text) t.textContent = text;
      t.classList.toggle("soon", left < 5 * 60 * 1000);
    });
  }
  tick();
  window.setInterval(tick, 1000);

  // Single-select with "Other": typing picks "Other".
  document.addEventListener("input", function (e) {
    var el = e.target;
    if (!el.id) return;
    var radio = document.querySelector('input[type=radio][data-other="' + CSS.escape(el.id) + '"]');
    if (radio && el.value.trim() !== "") radio.checked = true;
  });

  // Conditional items (show_if): an item shows once the answer it depends
  // on matches, live. A hidden item's fieldset is disabled, so nothing in
  // it is sent; without this script every item shows, with its condition.
  function applyConditions(form) {
    form.querySelectorAll("fieldset[data-show-item]").forEach(function (fs) {
      var src = form.querySelector('fieldset[data-index="' + fs.dataset.showItem + '"]');
      var values = (fs.dataset.values || "").split(" ");
      var hit = false;
      if (src) {
        src.querySelectorAll('input[name="a' + fs.dataset.showItem + '"]').forEach(function (el) {
          if (el.checked && values.indexOf(el.value) >= 0) hit = true;
        });
      }
      var show = !!src && !src.disabled && (fs.dataset.none ? !hit : hit);
      fs.hidden = !show;
      fs.disabled = !show;
    });
  }
  function applyAllConditions() {
    document.querySelectorAll("form.answer").forEach(applyConditions);
  }
  document.addEventListener("change", function (e) {
    var form = e.target.closest && e.target.closest("form.answer");
    if (form) applyConditions(form);
  });
  applyAllConditions();
  new MutationObserver(applyAllConditions).observe(document.getElementById("main"), { childList: true, subtree: true });

  // After a form problem, focus goes to the message that explains it.
  var problem = document.querySelector(".card .alert[role=alert]");
  if (problem && (document.activeElement === body || !document.activeElement)) problem.focus();

  // The outcome flash is shown once: a reload of this URL shows no flash
  // (the server agrees), and the address bar loses the ?done=.
  if (window.history.replaceState && /[?&]done=/.test(window.location.search)) {
    window.history.replaceState(null, "", window.location.pathname + window.location.hash);
  }

  var cards = document.getElementById("cards");
  var empty = document.getElementById("empty");
  var count = document.getElementById("count");

  // How many questions wait (all pages), as the stream's sync said and its
  // events since moved it, or null before the first sync: then the count
  // is the server's. Every created event is one more, every final one
  // (answered, cancelled, expired, removed: only ever of a pending
  // question) one fewer.
  var pending = null;
  function updateCount() {
    if (!cards) return;
    var n = pending !== null ? Math.max(pending, 0)
      : Number(count ? count.dataset.count : 0);
    if (count) {
      count.dataset.count = n;
      count.textContent = n === 0 ? "All caught up"
        : n + (n === 1 ? " question is" : " questions are") + " waiting, nearest deadline first";
    }
    if (empty) empty.hidden = n !== 0;
    document.title = (n ? "Inbox (" + n + ")" : "Inbox") + " · askbridge";
  }

  function removeCard(card) {
    var hadFocus = card.contains(document.activeElement);
    card.classList.add("leaving");
    updateCount();
    window.setTimeout(function () {
      if (card.parentNode) card.parentNode.removeChild(card);
      // A batch's strip goes with the last of its calls.
      var b = card.dataset.batch, head = b && document.getElementById("b-" + b);
      if (head && !document.querySelector('article.card[data-batch="' + b + '"]')) head.parentNode.removeChild(head);
      if (hadFocus) document.getElementById("main").focus();
    }, 250);
  }

  // Whether the person typed into a field. A field the page pre-fills
  // (an action's arguments to edit) counts only once changed.
  function typedInto(t) {
    if (t.hasAttribute("data-prefilled")) return t.value !== t.defaultValue;
    return t.value.trim() !== "";
  }

  // A question settled elsewhere: the card stays, says so, and keeps what
  // the person had typed (read-only, so it can still be copied); its
  // controls stop working. "Hide" removes it.
  function settleCard(id, outcome, title) {
    var card = document.getElementById("q-" + id);
    if (!card || card.classList.contains("settled") || card.classList.contains("leaving")) return;
    var typed = false;
    card.querySelectorAll("input[type=text], textarea").forEach(function (t) {
      if (typedInto(t)) typed = true;
      t.readOnly = true;
    });
    card.querySelectorAll("input[type=radio], input[type=checkbox]").forEach(function (c) { c.disabled = true; });
    card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
    card.querySelectorAll(".deadline").forEach(function (d) { d.removeAttribute("data-countdown"); d.textContent = "no longer waiting"; });
    card.classList.add("settled");
    card.classList.remove("unread");
    var note = document.createElement("p");
    note.className = "settled-note";
    var text = document.createElement("span");
    text.textContent = (outcome || "No longer waiting for an answer") +
      (typed ? " — your answer was not sent; what you typed is kept below." : ".");
    note.appendChild(text);
    var hide = document.createElement("button");
    hide.type = "button";
    hide.className = "secondary";
    hide.textContent = page === "question" ? "Show the outcome" : "Hide";
    hide.addEventListener("click", function () { if (page === "question") refreshMain(); else removeCard(card); });
    note.appendChild(hide);
    var head = card.querySelector(".card-title");
    head.parentNode.insertBefore(note, head.nextSibling);
    updateCount();
    announce((title ? "“" + title + "”: " : "") + (outcome || "no longer waiting"));
  }

  // Whether a card due at exp belongs on this page of the inbox: later
  // pages hold later deadlines.
  function onThisPage(exp) {
    var shown = cards.querySelectorAll("article.card:not(.settled)");
    if (cards.dataset.more && shown.length && exp > Date.parse(shown[shown.length - 1].dataset.expires)) return false;
    if (Number(cards.dataset.page) > 1 && shown.length && exp < Date.parse(shown[0].dataset.expires)) return false;
    return true;
  }

  var fetching = {};
  function addCard(id, quiet, expires) {
    if (!cards || document.getElementById("q-" + id) || fetching[id]) return;
    if (expires && !onThisPage(Date.parse(expires))) return;
    fetching[id] = true;
    fetch("/questions/" + encodeURIComponent(id) + "?fragment=card", { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        if (document.getElementById("q-" + id)) return;
        var tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        var card = tpl.content.firstElementChild;
        if (!card) return;
        var exp = Date.parse(card.dataset.expires);
        if (!onThisPage(exp)) return;
        var before = null;
        cards.querySelectorAll("article.card").forEach(function (c) {
          if (!before && Date.parse(c.dataset.expires) > exp) before = c;
        });
        card.classList.add("arriving");
        cards.insertBefore(card, before);
        updateCount();
        if (card.dataset.batch) addBatchHead(card.dataset.batch);
        if (!quiet) {
          var t = card.querySelector(".card-title");
          announce("New question: " + (t ? t.textContent : ""));
        }
      })
      .catch(function () {})
      .then(function () { delete fetching[id]; });
  }

  // A call of a batch arrived: once two or more of its calls are shown, the
  // batch's strip (Allow all / Deny all of the calls shown) stands above
  // the first of them, its count kept current.
  function addBatchHead(b) {
    var shown = cards.querySelectorAll('article.card[data-batch="' + b + '"]:not(.settled)');
    if (shown.length < 2) return;
    fetch("/batches/" + encodeURIComponent(b) + "?fragment=head", { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        var head = tpl.content.firstElementChild;
        if (!head) return;
        var shownIds = {};
        cards.querySelectorAll('article.card[data-batch="' + b + '"]:not(.settled)').forEach(function (c) { shownIds[c.dataset.id] = true; });
        // The strip decides only the calls this page shows.
        head.querySelectorAll('input[name="q"]').forEach(function (i) { if (!shownIds[i.value]) i.parentNode.removeChild(i); });
        var old = document.getElementById("b-" + b);
        if (old) old.parentNode.removeChild(old);
        var first = cards.querySelector('article.card[data-batch="' + b + '"]');
        if (first) {
          cards.insertBefore(head, first);
          cards.querySelectorAll('article.card[data-batch="' + b + '"]').forEach(function (c) { c.classList.add("in-batch"); });
        }
      })
      .catch(function () {});
  }

  // A pending card's tally or responders changed: replace those lines only,
  // so a half-filled form on the card keeps what was typed.
  function updateCard(id) {
    var card = document.getElementById("q-" + id);
    if (!card) return;
    fetch("/questions/" + encodeURIComponent(id) + "?fragment=card", { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var tpl = document.createElement("template");
        tpl.innerHTML = html.trim();
        var fresh = tpl.content.firstElementChild;
        if (!fresh) return;
        ["div.remarks", "p.approvals", "p.responders"].forEach(function (sel) {
          var old = card.querySelector(sel), now = fresh.querySelector(sel);
          if (old && now) old.replaceWith(now);
          else if (now) {
            var foot = card.querySelector(".card-foot");
            if (foot) foot.parentNode.insertBefore(now, foot);
          }
        });
        var tally = card.querySelector("p.approvals .tally");
        if (tally) announce(tally.textContent);
      })
      .catch(function () {});
  }

  // Question and run pages: reload the main content in place.
  var refreshing = false;
  function refreshMain() {
    if (refreshing) return;
    refreshing = true;
    fetch(window.location.pathname, { credentials: "same-origin" })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        if (fresh) document.getElementById("main").innerHTML = fresh.innerHTML;
      })
      .catch(function () {})
      .then(function () { refreshing = false; });
  }

  function relevant(ev) {
    if (page === "question") return ev.id === body.dataset.question;
    if (page === "run" || page === "batch") return ev.run_id === body.dataset.run && ev.project_id === body.dataset.project;
    return false;
  }

  if (!window.EventSource) return;
  // The stream's sync names only what this page shows: its page of the
  // inbox, its question, or its run's pending questions.
  var params = [];
  if (cards && cards.dataset.page) params.push("page=" + encodeURIComponent(cards.dataset.page));
  if (body.dataset.question) params.push("question=" + encodeURIComponent(body.dataset.question));
  if (body.dataset.run) params.push("project=" + encodeURIComponent(body.dataset.project || ""), "run=" + encodeURIComponent(body.dataset.run));
  var es = new EventSource("/inbox/events" + (params.length ? "?" + params.join("&") : ""));
  es.addEventListener("sync", function (e) {
    body.dataset.live = "on";
    var data = JSON.parse(e.data);
    var qs = data.questions || [];
    var want = {};
    qs.forEach(function (q) { want[q.id] = q; });
    if (page === "run" || page === "batch") {
      // Refresh only when the run's pending questions differ from the page.
      var shown = {}, differ = false;
      if (page === "run") document.querySelectorAll("li.tl.status-pending").forEach(function (li) { shown[li.id.slice(3)] = true; });
      else document.querySelectorAll("article.card:not(.final)").forEach(function (c) { shown[c.dataset.id] = true; });
      qs.forEach(function (q) {
        if (q.run_id === body.dataset.run && q.project_id === body.dataset.project && !shown[q.id]) differ = true;
      });
      Object.keys(shown).forEach(function (id) { if (!want[id]) differ = true; });
      if (differ) refreshMain();
      return;
    }
    if (page === "question") {
      // Only when the question was settled while the page was away.
      var mine = document.getElementById("q-" + body.dataset.question);
      if (!want[body.dataset.question] && document.querySelector("form.answer")) {
        if (started(mine)) settleCard(body.dataset.question, "");
        else refreshMain();
      }
      return;
    }
    if (!cards) return; // pages without cards (history) only keep times current
    pending = Number(data.count) || 0;
    updateCount();
    qs.forEach(function (q) { addCard(q.id, true, q.expires_at); });
    // A card the sync does not name was settled while the page was away,
    // unless it is due after the page's last (data.more): then it only
    // moved to a later page, and stays until its own event comes.
    var lastDue = qs.length ? Date.parse(qs[qs.length - 1].expires_at) : -Infinity;
    cards.querySelectorAll("article.card").forEach(function (c) {
      if (want[c.dataset.id]) return;
      if (data.more && Date.parse(c.dataset.expires) > lastDue) return;
      // Likewise one due before a later page's first: it moved up a page.
      if (Number(data.page) > 1 && qs.length && Date.parse(c.dataset.expires) < Date.parse(qs[0].expires_at)) return;
      settleCard(c.dataset.id, "");
    });
  });
  es.addEventListener("question.created", function (e) {
    var ev = JSON.parse(e.data);
    if (page === "inbox") {
      if (pending !== null) pending++;
      updateCount();
      addCard(ev.id, false, ev.expires_at);
    }
    else if (relevant(ev)) refreshMain();
  });
  es.addEventListener("question.updated", function (e) {
    var ev = JSON.parse(e.data);
    if (page === "inbox" || relevant(ev)) updateCard(ev.id);
  });
  // Whether the person started answering on the card: typed or picked.
  function started(card) {
    if (!card) return false;
    var any = false;
    card.querySelectorAll("input[type=text], textarea").forEach(function (t) { if (typedInto(t)) any = true; });
    if (card.querySelector("input[type=radio]:checked, input[type=checkbox]:checked")) any = true;
    return any;
  }

  ["question.answered", "question.cancelled", "question.expired", "question.removed"].forEach(function (type) {
    es.addEventListener(type, function (e) {
      var ev = JSON.parse(e.data);
      if (page === "inbox") {
        if (pending !== null) pending--;
        settleCard(ev.id, ev.outcome, ev.title);
        updateCount();
      }
      else if (page === "question" && relevant(ev) && started(document.getElementById("q-" + ev.id))) settleCard(ev.id, ev.outcome, ev.title);
      else if (relevant(ev)) { refreshMain(); announce(ev.outcome || ""); }
    });
  });
  es.addEventListener("error", function () { body.dataset.live = "reconnecting"; });
  es.addEventListener("signed-out", function () { es.close(); window.location.reload(); });
})();
