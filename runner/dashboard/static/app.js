// Reasonix dashboard: times in the viewer's zone, deadline countdowns, and
// a task's steps arriving live. No inline script anywhere (the page's
// Content-Security-Policy forbids it); everything works without this file
// except the live updates.
"use strict";

function localTimes(root) {
  root.querySelectorAll("time[datetime]:not([data-age]):not([data-countdown])").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d)) { el.title = el.textContent; el.textContent = d.toLocaleString(); }
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
var LIVE = ["queued", "running", "waiting_approval"];

// followState shows the Cancel or the Resume form as the task's state
// allows (the forms are there only for who may control the task).
function followState(task, state) {
  var live = LIVE.indexOf(state) >= 0;
  task.querySelectorAll("form[data-while]").forEach(function (f) {
    f.hidden = (f.dataset.while === "live") !== live;
  });
}

// live follows a running task: each event comes rendered by the server
// (the same escaped template as the page), so nothing here builds HTML.
function live(task) {
  if (!task.hasAttribute("data-live") || !window.EventSource) return;
  var list = document.getElementById("events"), dot = document.getElementById("live");
  // A page whose later steps are on the next page follows only the state,
  // plan and fleet; its step list stays as it is.
  var src = new EventSource("/tasks/" + encodeURIComponent(task.dataset.task) + "/live?after=" + task.dataset.last +
    (task.hasAttribute("data-more") ? "&steps=0" : ""));
  src.onopen = function () { dot.hidden = false; };
  src.onerror = function () { dot.hidden = true; };
  src.onmessage = function (m) {
    var ev = JSON.parse(m.data);
    if (ev.fleet) {
      var old = document.getElementById("fleet-" + ev.fleet_id);
      if (old) old.outerHTML = ev.fleet;
      else document.getElementById("fleets").insertAdjacentHTML("beforeend", ev.fleet);
    } else if (ev.plan !== undefined) {
      document.getElementById("plan").innerHTML = ev.plan;
    } else if (ev.html && !document.getElementById("e" + ev.seq)) {
      list.insertAdjacentHTML("beforeend", ev.html);
      localTimes(list.lastElementChild);
    }
    if (ev.state) {
      var badge = task.querySelector("h1 [data-state]");
      badge.textContent = ev.state;
      badge.className = "state s-" + ev.state;
      followState(task, ev.state);
      if (FINAL.indexOf(ev.state) >= 0) { src.close(); dot.hidden = true; }
    }
  };
}

// refreshList keeps the first page of the task list current: new tasks and
// state changes show without a reload. It fetches the page itself (the same
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
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("task-list");
      if (!fresh || fresh.innerHTML === last) return;
      last = fresh.innerHTML;
      list.innerHTML = last;
      localTimes(list);
      tick();
    }).catch(function () { /* offline for a moment: the next tick tries again */ }).then(function () { busy = false; });
  }, 3000);
}

document.addEventListener("DOMContentLoaded", function () {
  var list = document.getElementById("task-list");
  if (list && list.hasAttribute("data-refresh")) refreshList(list);
  localTimes(document);
  tick();
  setInterval(tick, 1000);
  var task = document.getElementById("task");
  if (task) live(task);
});
