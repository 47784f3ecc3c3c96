// Reasonix dashboard: times in the viewer's zone, deadline countdowns, and
// a task's steps arriving live. No inline script anywhere (the page's
// Content-Security-Policy forbids it); everything works without this file
// except the live updates.
"use strict";

// LOCAL is how a time shows: in the viewer's zone, named ("CET", "GMT+2").
var LOCAL = { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", timeZoneName: "short" };

function localTimes(root) {
  // A schedule's times stay in the schedule's zone (data-zone); the
  // viewer's own reading is their tooltip.
  root.querySelectorAll("time[data-zone]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d)) el.title = d.toLocaleString(undefined, LOCAL);
  });
  root.querySelectorAll("time[datetime]:not([data-age]):not([data-countdown]):not([data-zone])").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    // With the zone's name: a time without its zone is a guess.
    if (!isNaN(d)) { el.title = el.textContent; el.textContent = d.toLocaleString(undefined, LOCAL); }
  });
}

function short(ms) {
  var s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m " + (s % 60) + "s";
  if (s < 172800) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d";
}

function tick() {
  var now = Date.now();
  document.querySelectorAll("time[data-countdown]").forEach(function (el) {
    var left = new Date(el.getAttribute("datetime")) - now;
    el.textContent = left > 0 ? "in " + short(left) : "expired";
    el.classList.toggle("expired", left <= 0);
  });
  document.querySelectorAll("time[data-age]").forEach(function (el) {
    el.textContent = short(now - new Date(el.getAttribute("datetime")));
    el.title = new Date(el.getAttribute("datetime")).toLocaleString();
  });
}

// FINAL are the states a task does not leave by itself: the stream can stop.
var FINAL = ["succeeded", "failed", "blocked", "cancelled", "interrupted", "budget_exhausted"];

// LIVE are the states a task may be cancelled in; in any other it may be
// resumed (the server's terminal() is the same split). The server still
// refuses a wrong action: this only keeps the page from offering one.
var LIVE = ["queued", "running", "waiting_approval", "waiting_ci"];

// followState shows the Cancel or the Resume form as the task's state
// allows (the forms are there only for who may control the task).
function followState(task, state) {
  var live = LIVE.indexOf(state) >= 0;
  task.querySelectorAll("form[data-while]").forEach(function (f) {
    f.hidden = (f.dataset.while === "live") !== live;
  });
}

// swapFrom replaces the contents of the elements with these ids by those
// of a fresh rendering of the page (the server's escaped HTML).
function swapFrom(html, ids) {
  var doc = new DOMParser().parseFromString(html, "text/html");
  ids.forEach(function (id) {
    var fresh = doc.getElementById(id), old = document.getElementById(id);
    if (fresh && old && fresh.innerHTML !== old.innerHTML) { old.innerHTML = fresh.innerHTML; localTimes(old); }
  });
  showPending(doc);
}

// refreshHead fetches the page again and swaps its header (outcome, reason,
// question, numbers) and its approvals, as the task's state changes.
function refreshHead() {
  fetch(location.href, { headers: { Accept: "text/html" } }).then(function (r) {
    return r.ok && !r.redirected ? r.text() : null;
  }).then(function (html) { if (html !== null) swapFrom(html, ["head", "pr", "approvals"]); }).catch(function () {});
}

// addToStory puts a conversation line in its turn: a call's end replaces
// its start's line; a turn the page lacks is added first.
function addToStory(ev) {
  var story = document.getElementById("story");
  if (!story) return;
  // No turn id: the line belongs to the latest turn.
  var turn = ev.turn_id ? document.getElementById(ev.turn_id) : story.querySelector("section.turn:last-of-type");
  if (!turn) {
    var empty = document.getElementById("story-empty");
    if (empty) empty.remove();
    story.insertAdjacentHTML("beforeend", ev.turn);
    turn = story.lastElementChild;
  }
  var old = ev.item_id ? document.getElementById(ev.item_id) : null;
  if (!old) { turn.querySelector("ol.items").insertAdjacentHTML("beforeend", ev.item); return; }
  // A call's end does not repeat its arguments: keep the start's words
  // ("ran go test ./...") and arguments in the line that replaces it.
  var tpl = document.createElement("template");
  tpl.innerHTML = ev.item;
  var line = tpl.content.firstElementChild, what = old.querySelector(".what"), args = old.querySelector("pre.args");
  if (what && line.querySelector(".what")) line.querySelector(".what").textContent = what.textContent;
  if (args && !line.querySelector("pre.args")) {
    var details = line.querySelector("details");
    if (details) details.querySelector("summary").after(args.cloneNode(true));
  }
  old.replaceWith(line);
}

// live follows a running task: each event comes rendered by the server
// (the same escaped templates as the page), so nothing here builds HTML.
function live(task) {
  if (!task.hasAttribute("data-live") || !window.EventSource) return;
  var list = document.getElementById("events"), dot = document.getElementById("live");
  var view = task.dataset.view;
  // A page whose later steps are on the next page, or the diff, follows
  // only the state, plan and fleet; its step list stays as it is.
  var src = new EventSource("/tasks/" + encodeURIComponent(task.dataset.task) + "/live?after=" + task.dataset.last +
    (task.hasAttribute("data-more") || view === "diff" ? "&steps=0" : "") + (view === "events" ? "&view=events" : ""));
  src.onopen = function () { dot.hidden = false; };
  src.onerror = function () { dot.hidden = true; };
  src.onmessage = function (m) {
    var ev = JSON.parse(m.data);
    if (ev.pr !== undefined) {
      var pr = document.getElementById("pr");
      if (pr) { pr.innerHTML = ev.pr; localTimes(pr); }
    } else if (ev.fleet) {
      var old = document.getElementById("fleet-" + ev.fleet_id), fleets = document.getElementById("fleets");
      if (old) old.outerHTML = ev.fleet;
      else if (fleets) { fleets.insertAdjacentHTML("beforeend", ev.fleet); fleets.parentElement.hidden = false; }
    } else if (ev.plan !== undefined) {
      var plan = document.getElementById("plan");
      if (plan) plan.innerHTML = ev.plan;
    } else if (ev.item) {
      addToStory(ev);
    } else if (ev.html && list && !document.getElementById("e" + ev.seq)) {
      list.insertAdjacentHTML("beforeend", ev.html);
      localTimes(list.lastElementChild);
    }
    if (ev.state) {
      var badge = task.querySelector("h1 [data-state]");
      badge.textContent = ev.state;
      badge.className = "state s-" + ev.state;
      followState(task, ev.state);
      refreshHead();
      if (FINAL.indexOf(ev.state) >= 0) { src.close(); dot.hidden = true; }
    }
  };
}

// showPending sets the navigation's count of pending approvals and the
// title's, from a freshly fetched page (doc) or a count.
function showPending(doc) {
  var fresh = doc.getElementById ? doc.getElementById("pending-count") : null;
  setPending(fresh ? (fresh.hidden ? "" : fresh.textContent) : null);
}

function setPending(n) {
  var el = document.getElementById("pending-count");
  if (!el || n === null) return;
  el.textContent = n;
  el.hidden = n === "" || n === "0";
  var base = document.body.dataset.title || document.title;
  document.title = el.hidden ? base : "(" + n + ") " + base;
}

// followPending polls the count of pending approvals while the tab is
// visible, so a new request shows in the navigation and the title on any
// page. A session that ended stops it.
function followPending() {
  if (!document.getElementById("pending-count")) return;
  var busy = false;
  var timer = setInterval(function () {
    if (busy || document.hidden) return;
    busy = true;
    fetch("/approvals/count", { headers: { Accept: "application/json" } }).then(function (r) {
      if (!r.ok || r.redirected) { clearInterval(timer); return null; }
      return r.json();
    }).then(function (c) {
      if (c) setPending(c.pending > 500 ? "500+" : String(c.pending));
    }).catch(function () { /* offline for a moment */ }).then(function () { busy = false; });
  }, PENDING_EVERY);
}

// PENDING_EVERY is how often the count is polled, in ms.
var PENDING_EVERY = 3000;

// typing reports whether the person is in the middle of a form inside el:
// a focused field or a note typed but not sent. A refresh then waits, so
// nobody loses what they were typing.
function typing(el) {
  if (el.contains(document.activeElement) && document.activeElement.matches("input, textarea, select")) return true;
  return Array.prototype.some.call(el.querySelectorAll("input[type=text], textarea"), function (f) { return f.value !== ""; });
}

// refreshList keeps the first page of the task list (or the approvals
// page) current: new tasks, requests and state changes show without a
// reload, and so does the navigation's count. It fetches the page itself (the same
// filters) every few seconds while the tab is visible and swaps the list
// when the server's rendering changed; a session that ended stops it.
function refreshList(list) {
  var last = list.innerHTML, busy = false;
  var timer = setInterval(function () {
    if (busy || document.hidden) return;
    busy = true;
    fetch(location.href, { headers: { Accept: "text/html" } }).then(function (r) {
      if (!r.ok || r.redirected) { clearInterval(timer); return null; }
      return r.text();
    }).then(function (html) {
      if (html === null) return;
      var doc = new DOMParser().parseFromString(html, "text/html");
      showPending(doc);
      var fresh = doc.getElementById(list.id);
      if (!fresh || fresh.innerHTML === last || typing(list)) return;
      last = fresh.innerHTML;
      list.innerHTML = last;
      localTimes(list);
      tick();
    }).catch(function () { /* offline for a moment: the next tick tries again */ }).then(function () { busy = false; });
  }, 3000);
}

document.addEventListener("DOMContentLoaded", function () {
  ["task-list", "approval-list"].forEach(function (id) {
    var list = document.getElementById(id);
    if (list && list.hasAttribute("data-refresh")) refreshList(list);
  });
  if (!document.querySelector("[data-refresh]")) followPending();
  localTimes(document);
  tick();
  setInterval(tick, 1000);
  var task = document.getElementById("task");
  if (task) live(task);
});
