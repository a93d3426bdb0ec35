// django-celery-beat's periodic task form: shows what the chosen crontab means under its help text (the
// package's inline script, as a file the Content-Security-Policy allows).
'use strict';
{
    const script = document.getElementById('periodic-task-overrides');
    const readable = JSON.parse(document.getElementById('readable-crontabs').textContent);
    const original = script.dataset.crontabHelp || '';
    const $ = django.jQuery;

    const updateCrontabHelp = function(additional) {
        const help = $('.field-crontab .help');
        help.text(original);
        help.append(document.createElement('br'));
        help.append(document.createTextNode('Translation: ' + (additional || '')));
    };

    $('.field-crontab_translation').hide();
    $('.field-crontab').change(function() {
        updateCrontabHelp(readable[$('#id_crontab').val()]);
    });
}
