// The header's menu ("Site navigation") and "On this page" buttons. pydata-sphinx-theme 0.17 and sphinx-book-theme
// 1.3 each attach their sidebar handlers to the first element of the class (.primary-toggle, .secondary-toggle),
// which is the theme navbar's hidden copy; the buttons a reader sees got none, so on a phone a tap opened nothing
// and on a desktop the menu button did not hide the sidebar. A tap on a visible button is passed to that first
// button, whose handlers do what the themes meant: open the sidebar as a dialog on a narrow screen, hide or show
// it on a wide one.
(function () {
  function forward(selector) {
    var buttons = document.querySelectorAll(selector);
    if (buttons.length < 2) return;
    var handled = buttons[0];
    Array.prototype.slice.call(buttons, 1).forEach(function (button) {
      button.addEventListener('click', function (event) {
        event.preventDefault();
        event.stopPropagation();
        handled.click();
        button.blur();
      });
    });
  }
  function start() {
    forward('.primary-toggle');
    forward('.secondary-toggle');
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
